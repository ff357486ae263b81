"""mx.util: NumPy shape/array semantics switches, scopes, decorators, thread-locality."""
import threading

import pytest

from mxtorch import util


@pytest.fixture(autouse=True)
def _reset():
    util.reset_np()
    yield
    util.reset_np()


def test_set_np_and_reset():
    assert not util.is_np_shape() and not util.is_np_array()
    util.set_np()
    assert util.is_np_shape() and util.is_np_array()
    util.reset_np()
    assert not util.is_np_shape() and not util.is_np_array()


def test_set_np_shape_returns_previous_and_guards():
    assert util.set_np_shape(True) is False
    assert util.set_np_shape(True) is True
    util.set_np()
    with pytest.raises(ValueError):
        util.set_np_shape(False)
    with pytest.raises(ValueError):
        util.set_np(shape=False, array=True)


def test_scopes_restore():
    with util.np_shape():
        assert util.is_np_shape()
        with util.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    with util.np_array():
        assert util.is_np_array()
    assert not util.is_np_array()


def test_decorators_function_and_class():
    @util.use_np
    def f():
        return util.is_np_shape(), util.is_np_array()
    assert f() == (True, True)
    assert not util.is_np_array()

    @util.use_np_array
    class Block:
        def forward(self):
            return util.is_np_array()

        @property
        def flag(self):
            return util.is_np_array()

        @staticmethod
        def stat():
            return util.is_np_array()
    b = Block()
    assert b.forward() and b.flag and Block.stat()
    assert util.use_np_shape(lambda: util.is_np_shape())()
    with pytest.raises(TypeError):
        util.use_np(3)


def test_thread_local():
    util.set_np()
    seen = []
    th = threading.Thread(target=lambda: seen.append((util.is_np_shape(), util.is_np_array())))
    th.start()
    th.join()
    assert seen == [(False, False)]
    assert util.is_np_array()


def test_env():
    util.setenv("MXTORCH_TEST_ENV", "1")
    assert util.getenv("MXTORCH_TEST_ENV") == "1"
    util.setenv("MXTORCH_TEST_ENV", None)
    assert util.getenv("MXTORCH_TEST_ENV") is None

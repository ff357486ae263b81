"""gluon.utils against MXNet 1.9.1 behaviour."""
import collections
import hashlib

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.gluon import utils


def test_split_data():
    x = mx.nd.array(np.arange(20).reshape(10, 2))
    parts = utils.split_data(x, 3, even_split=False)
    assert [p.shape[0] for p in parts] == [4, 3, 3]
    np.testing.assert_array_equal(parts[2].asnumpy(), np.arange(14, 20).reshape(3, 2))
    with pytest.raises(ValueError, match=r"data with shape \(10, 2\) cannot be evenly split "
                                         r"into 3 slices along axis 0"):
        utils.split_data(x, 3)
    cols = utils.split_data(x, 2, batch_axis=1)
    np.testing.assert_array_equal(cols[1].asnumpy(), np.arange(1, 20, 2).reshape(10, 1))


def test_split_and_load():
    parts = utils.split_and_load(np.arange(8).reshape(4, 2), [mx.cpu(0), mx.cpu(1)])
    assert [p.context for p in parts] == [mx.cpu(0), mx.cpu(1)]
    assert parts[1].dtype == np.float32
    np.testing.assert_array_equal(parts[1].asnumpy(), [[4, 5], [6, 7]])
    one = utils.split_and_load(mx.nd.ones((3, 1)), [mx.cpu(1)])
    assert len(one) == 1 and one[0].shape == (3, 1) and one[0].context == mx.cpu(1)


def test_clip_global_norm():
    # oracle: MXNet 1.9.1 returns 13.0 and scales by 6.5 / 13
    a, b = mx.nd.array([[3., 4.]]), mx.nd.array([12.])
    assert utils.clip_global_norm([a, b], 6.5) == pytest.approx(13.0)
    np.testing.assert_allclose(a.asnumpy(), [[1.5, 2.0]], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [6.0], rtol=1e-6)
    c = mx.nd.array([1.0])
    norm = utils.clip_global_norm([c], 10.0, check_isfinite=False)
    assert isinstance(norm, mx.nd.NDArray) and norm.shape == (1,)
    assert c.asnumpy()[0] == 1.0
    with pytest.warns(UserWarning, match='nan or inf is detected'):
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)


def test_check_sha1_and_download(tmp_path):
    f = tmp_path / 'a.bin'
    f.write_bytes(b'mxtorch')
    assert utils.check_sha1(str(f), hashlib.sha1(b'mxtorch').hexdigest())
    assert not utils.check_sha1(str(f), '0' * 40)
    assert utils.download('http://x.org/a.bin', path=str(tmp_path)) == str(f)
    with pytest.raises(RuntimeError, match=r'Failed downloading url http://x.org/b.bin.*'
                                           r'place it at .*b.bin'):
        utils.download('http://x.org/b.bin', path=str(tmp_path))
    with pytest.raises(RuntimeError, match='with sha1 0000'):
        utils.download('http://x.org/a.bin', path=str(tmp_path), sha1_hash='0' * 40)


def test_helpers():
    assert utils._brief_print_list(list('abcdefghij')) == \
        "'a', 'b', 'c', ..., 'g', 'h', 'i', 'j'"
    assert utils._indent('a\nb', 2) == 'a\n  b'
    assert utils.shape_is_known((2, 3)) and not utils.shape_is_known((0, 3))
    assert not utils.shape_is_known(None)
    hooks = collections.OrderedDict()
    h = utils.HookHandle()
    h.attach(hooks, print)
    assert list(hooks.values()) == [print]
    with h:
        pass
    assert not hooks

"""mx.base, mx.error, mx.engine, mx.log, mx.runtime and the module surface MXNet's own
tests import (star imports of test_utils and autograd, Context.default_ctx)."""
import ctypes
import logging
import threading

import numpy as np
import pytest
import torch

import mxtorch as mx
from mxtorch import base
from mxtorch.base import MXNetError, NotImplementedForSymbol


def test_data_dir_follows_mxnet_home(monkeypatch, tmp_path):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert base.data_dir().endswith(".mxnet")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert base.data_dir() == str(tmp_path)


def test_not_implemented_for_symbol_message():
    err = NotImplementedForSymbol("__bool__", "bool", 1)
    assert isinstance(err, MXNetError)
    assert str(err) == ("Function __bool__ (namely operator \"bool\") with arguments "
                        "(<class 'int'>) is not implemented for Symbol and only available "
                        "in NDArray.")
    with pytest.raises(NotImplementedForSymbol):
        s = mx.sym.var("a")
        s += 1


def test_ctypes_helpers():
    assert base.c_str("abc").value == b"abc"
    arr = base.c_array(ctypes.c_int, [1, 2, 3])
    assert list(arr) == [1, 2, 3]
    assert [s for s in base.c_str_array(["a", "bc"])] == [b"a", b"bc"]
    assert base.py_str(b"x") == "x" and base.py_str("y") == "y"
    base.check_call(0)
    with pytest.raises(MXNetError):
        base.check_call(-1)
    buf = (base.mx_float * 6)(*range(6))
    shared = base.ctypes2numpy_shared(ctypes.cast(buf, base.mx_float_p), (2, 3))
    buf[5] = 42.0
    assert shared[1, 2] == 42.0   # shares the C memory


def test_as_list():
    assert base._as_list([1]) == [1]
    assert base._as_list((1, 2)) == [(1, 2)]
    assert base._as_list(3) == [3]


def test_error_registry():
    assert issubclass(mx.error.InternalError, MXNetError)
    assert "MXNet hint" in str(mx.error.InternalError("boom"))
    assert base.error_types["ValueError"] is ValueError

    @mx.error.register
    class MyError(MXNetError):
        pass
    assert base.error_types["MyError"] is MyError


def test_engine_bulk_restores_size():
    prev = mx.engine.set_bulk_size(7)
    try:
        with mx.engine.bulk(10):
            assert mx.engine.set_bulk_size(10) == 10
            x = mx.nd.ones((10,))
            x += 1
        assert mx.engine.set_bulk_size(7) == 7
        assert (x.asnumpy() == 2).all()
    finally:
        mx.engine.set_bulk_size(prev)


def test_log_get_logger_formats_like_glog(tmp_path):
    path = tmp_path / "log.txt"
    logger = mx.log.get_logger("mxtorch_test_logger", filename=str(path), level=logging.INFO)
    logger.info("hello")
    assert "hello" in path.read_text()
    assert mx.log.get_logger("mxtorch_test_logger") is logger
    rec = logging.LogRecord("n", logging.WARNING, "f.py", 3, "msg", None, None)
    assert mx.log._Formatter().format(rec).startswith("\x1b[31mW")


def test_runtime_features_reflect_torch():
    features = mx.runtime.Features()
    assert features is mx.runtime.Features()
    assert len(features) >= 30 and "CUDA" in features
    assert features.is_enabled("cuda") == torch.backends.cuda.is_built()
    assert features.is_enabled("MKLDNN") == torch.backends.mkldnn.is_available()
    assert features.is_enabled("TVM_OP") is False
    assert repr(features["PROFILER"]) == "✔ PROFILER"
    with pytest.raises(RuntimeError, match="is unknown"):
        features.is_enabled("this girl is on fire")


def test_context_default_ctx_is_thread_local():
    seen = []
    with pytest.warns(DeprecationWarning):
        base_ctx = mx.Context.default_ctx
    assert base_ctx == mx.current_context()

    def other():
        mx.Context.default_ctx = mx.cpu(11)
        seen.append(mx.current_context())
    thread = threading.Thread(target=other)
    with pytest.warns(DeprecationWarning):
        thread.start()
        thread.join()
    assert seen == [mx.cpu(11)]
    assert mx.current_context() == base_ctx
    assert mx.Context.current_context() == base_ctx


def test_star_imports_give_what_mxnet_modules_export():
    ns: dict = {}
    exec("from mxtorch.test_utils import *", ns)  # noqa: S102 - the star import is under test
    for name in ("mx", "np", "npt", "rnd", "sys", "os", "assert_almost_equal",
                 "check_consistency", "compare_optimizer", "verify_generator",
                 "discard_stderr", "DummyIter", "download", "use_np", "environment"):
        assert name in ns, name
    assert ns["mx"] is mx and ns["np"] is np
    ns = {}
    exec("from mxtorch.autograd import *", ns)  # noqa: S102 - the star import is under test
    assert ns["NDArray"] is mx.nd.NDArray and ns["Symbol"] is mx.sym.Symbol
    assert ns["record"] is mx.autograd.record


def test_top_level_names():
    assert mx.rnd is mx.random and mx.img is mx.image
    with mx.np_shape(True):
        assert mx.is_np_shape()
    assert not mx.is_np_shape()
    assert not mx.is_np_array()
    from mxtorch.ndarray.ndarray import _DTYPE_MX_TO_NP, _DTYPE_NP_TO_MX, _GRAD_REQ_MAP
    assert _DTYPE_NP_TO_MX[np.float16] == 2 and _DTYPE_MX_TO_NP[6] is np.int64
    assert _GRAD_REQ_MAP == {"null": 0, "write": 1, "add": 3}
    assert mx.util.np_ufunc_legal_option("casting", "unsafe")
    assert not mx.util.np_ufunc_legal_option("dtype", "complex64")

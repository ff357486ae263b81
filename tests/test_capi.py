"""mxtorch.base._LIB: MXNet's C entry points called through ctypes (mxtorch/capi.py), the
handle tables behind NDArray/Symbol handles, and MXNet's error plumbing (MXGetLastError,
c2pyerror, get_last_ffi_error, check_call). Expected values come from real MXNet 1.9.1."""
import ctypes
import gc
import json
import os
import threading

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import base
from mxtorch.base import (MXNetError, NDArrayHandle, SymbolHandle, _LIB, c_str,
                          c_str_array, check_call, mx_uint)


def _last_error() -> str:
    return base.py_str(_LIB.MXGetLastError())


# ---------------------------------------------------------------------- library
def test_version_and_unknown_entry_point():
    v = ctypes.c_int()
    assert _LIB.MXGetVersion(ctypes.byref(v)) == 0
    assert v.value == 10901
    with pytest.raises(AttributeError, match="MXNoSuchEntryPoint"):
        _LIB.MXNoSuchEntryPoint  # noqa: B018 - the lookup is what raises
    assert "MXGetVersion" in dir(_LIB) and "MXNoSuchEntryPoint" not in dir(_LIB)


def test_env_entry_points(monkeypatch):
    monkeypatch.delenv("MXTORCH_CAPI_TEST", raising=False)
    out = ctypes.c_char_p()
    check_call(_LIB.MXGetEnv(c_str("MXTORCH_CAPI_TEST"), ctypes.byref(out)))
    assert out.value is None                  # unset: NULL
    check_call(_LIB.MXSetEnv(c_str("MXTORCH_CAPI_TEST"), c_str("42")))
    assert os.environ["MXTORCH_CAPI_TEST"] == "42"
    check_call(_LIB.MXGetEnv(c_str("MXTORCH_CAPI_TEST"), ctypes.byref(out)))
    assert out.value == b"42"


def test_random_seed_entry_point_seeds_like_mx_random_seed():
    check_call(_LIB.MXRandomSeed(ctypes.c_int(7)))
    a = mx.nd.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random.uniform(shape=(4,)).asnumpy()
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- errors
def test_failing_call_records_error_and_check_call_raises_it():
    h = SymbolHandle()
    ret = _LIB.MXSymbolCreateFromJSON(c_str('{"nodes": garbage'), ctypes.byref(h))
    assert ret == -1 and h.value is None
    assert _last_error().startswith("MXNetError: symbol JSON is malformed")
    with pytest.raises(MXNetError, match="symbol JSON is malformed"):
        check_call(ret)


def test_check_call_raises_the_registered_class():
    # int(b'x') fails inside the entry point: a ValueError, which mx.error registers
    ret = _LIB.MXRandomSeed(ctypes.c_char_p(b"x"))
    assert ret == -1
    assert _last_error().startswith("ValueError: invalid literal for int()")
    with pytest.raises(ValueError, match="invalid literal") as info:
        check_call(ret)
    assert not isinstance(info.value, MXNetError)


def test_null_string_and_bad_output_argument():
    with pytest.raises(MXNetError, match="string argument is NULL"):
        check_call(_LIB.MXSymbolCreateFromJSON(ctypes.c_char_p(), ctypes.byref(SymbolHandle())))
    with pytest.raises(MXNetError, match="is not ctypes.byref"):
        check_call(_LIB.MXGetVersion(ctypes.c_int()))


def test_last_error_is_per_thread():
    ret = _LIB.MXRandomSeed(ctypes.c_char_p(b"main"))
    assert ret == -1
    seen = []

    def worker():
        seen.append(_last_error())
        _LIB.MXRandomSeed(ctypes.c_char_p(b"thread"))
        seen.append(_last_error())
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen[0] == "" and "b'thread'" in seen[1]
    assert "b'main'" in _last_error()


def test_check_call_without_recorded_message():
    def fresh():
        try:
            base.check_call(-3)
        except MXNetError as err:
            return str(err)
    out = []
    t = threading.Thread(target=lambda: out.append(fresh()))
    t.start()
    t.join()
    assert out == ["C API call failed with status -3"]


def test_c2pyerror_splits_type_message_and_stack_trace():
    msg, kind = base.c2pyerror("ValueError: bad thing\nStack trace:\n  [bt] (0) a\n"
                               "  [bt] (1) b\nmore\n")
    assert kind == "ValueError"
    assert msg == ("Traceback (most recent call last):\n  [bt] (1) b\n  [bt] (0) a\n"
                   "ValueError: bad thing\nmore")
    # MXNet's _find_error_type: the text before the first ':' when it has only
    # letters, digits, '_' and '.'
    assert base.c2pyerror("a.b.C: y") == ("a.b.C: y", "a.b.C")
    assert base.c2pyerror("1Err: x") == ("1Err: x", "1Err")
    assert base.c2pyerror(":x") == (":x", "")
    assert base.c2pyerror("Check failed: x") == ("Check failed: x", None)
    assert base.c2pyerror("no colon") == ("no colon", None)


def test_get_last_ffi_error_strips_mxnet_error_prefix(monkeypatch):
    @mx.error.register
    class CapiTestError(MXNetError):
        pass
    entries = base.__getattr__("_LIB")
    monkeypatch.setattr(type(entries), "MXGetLastError",
                        staticmethod(lambda: b"mxnet.error.CapiTestError: boom"), raising=False)
    err = base.get_last_ffi_error()
    assert type(err) is CapiTestError and str(err) == "mxnet.error.CapiTestError: boom"
    monkeypatch.setattr(type(entries), "MXGetLastError",
                        staticmethod(lambda: b"UnregisteredThing: boom"), raising=False)
    err = base.get_last_ffi_error()
    assert type(err) is MXNetError and str(err) == "UnregisteredThing: boom"
    mx.base.error_types.pop("CapiTestError")


# ---------------------------------------------------------------------- NDArray handles
def test_ndarray_handle_round_trip_and_queries():
    a = mx.nd.array([[1, 2, 3], [4, 5, 6]], dtype="float64")
    h = ctypes.cast(a, NDArrayHandle)
    b = mx.nd.NDArray(h)
    b[0, 0] = 9
    assert a.asnumpy()[0, 0] == 9               # the same memory
    ndim, pdata = ctypes.c_int(), ctypes.POINTER(ctypes.c_int)()
    for handle in (a, h, a.handle):             # the array, its C handle, NDArray.handle
        check_call(_LIB.MXNDArrayGetShapeEx(handle, ctypes.byref(ndim), ctypes.byref(pdata)))
        assert [pdata[i] for i in range(ndim.value)] == [2, 3]
    dt = ctypes.c_int()
    check_call(_LIB.MXNDArrayGetDType(a, ctypes.byref(dt)))
    assert dt.value == 1                         # float64
    check_call(_LIB.MXNDArrayWaitToRead(a))
    check_call(_LIB.MXNDArrayWaitAll())


def test_dead_ndarray_handle_is_an_error():
    a = mx.nd.ones((2,))
    address = ctypes.cast(a, NDArrayHandle).value
    del a
    gc.collect()
    with pytest.raises(MXNetError, match="not the handle of a live NDArray"):
        check_call(_LIB.MXNDArrayWaitToRead(ctypes.c_void_p(address)))
    with pytest.raises(MXNetError, match="not the handle of a live NDArray"):
        mx.nd.NDArray(ctypes.c_void_p(address))


def test_dlpack_entry_points_share_memory():
    a = mx.nd.array([1.0, 2.0, 3.0])
    ptr = ctypes.c_void_p()
    check_call(_LIB.MXNDArrayToDLPack(a, ctypes.byref(ptr)))
    assert ptr.value
    out = NDArrayHandle()
    check_call(_LIB.MXNDArrayFromDLPack(ptr, ctypes.byref(out)))
    b = mx.nd.NDArray(out)
    b[1] = 7.0
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 7.0, 3.0])
    # a pointer nobody took is given back through its deleter
    spare = ctypes.c_void_p()
    check_call(_LIB.MXNDArrayToDLPack(a, ctypes.byref(spare)))
    check_call(_LIB.MXNDArrayCallDLPackDeleter(spare))
    check_call(_LIB.MXNDArrayCallDLPackDeleter(ctypes.c_void_p()))   # NULL: nothing
    np.testing.assert_array_equal(b.asnumpy(), [1.0, 7.0, 3.0])
    with pytest.raises(MXNetError, match="pointer is NULL"):
        check_call(_LIB.MXNDArrayFromDLPack(ctypes.c_void_p(), ctypes.byref(out)))


# ---------------------------------------------------------------------- Symbol handles
def test_symbol_handle_round_trip_json_and_copy():
    x = mx.sym.var("x")
    y = mx.sym.exp(x, name="e") * 2
    assert isinstance(y.handle, ctypes.c_void_p)
    assert mx.sym.Symbol(y.handle).tojson() == y.tojson()
    text = ctypes.c_char_p()
    check_call(_LIB.MXSymbolSaveToJSON(y.handle, ctypes.byref(text)))
    assert json.loads(text.value) == json.loads(y.tojson())
    h = SymbolHandle()
    check_call(_LIB.MXSymbolCreateFromJSON(c_str(y.tojson()), ctypes.byref(h)))
    z = mx.sym.Symbol(h)
    assert z.list_outputs() == y.list_outputs() and z.list_arguments() == ["x"]
    assert [n["op"] for n in json.loads(z.tojson())["nodes"]] == ["null", "exp", "_mul_scalar"]
    c = SymbolHandle()
    check_call(_LIB.MXSymbolCopy(z, ctypes.byref(c)))
    copied = mx.sym.Symbol(c)
    assert copied.tojson() == y.tojson() and copied._outputs is not z._outputs


def test_symbol_handle_ownership_and_free():
    def make():
        h = SymbolHandle()
        check_call(_LIB.MXSymbolCreateFromJSON(c_str(mx.sym.var("v").tojson()),
                                               ctypes.byref(h)))
        return h
    # a handle the C API returned stays alive until a Symbol adopts it ...
    h = make()
    gc.collect()
    s = mx.sym.Symbol(h)
    assert s.list_arguments() == ["v"]
    # ... or until it is freed: then it names nothing
    h2 = make()
    check_call(_LIB.MXSymbolFree(h2))
    gc.collect()
    with pytest.raises(MXNetError, match="not the handle of a live Symbol"):
        mx.sym.Symbol(h2)
    with pytest.raises(MXNetError, match="not the handle of a live Symbol"):
        check_call(_LIB.MXSymbolSaveToJSON(h2, ctypes.byref(ctypes.c_char_p())))
    # the adopting Symbol keeps the graph when the handle's own object goes
    del h
    gc.collect()
    assert s.tojson() == mx.sym.var("v").tojson()


def test_handle_table_lend_give_adopt_free():
    table = base.HandleTable("Thing")

    class Thing:
        pass
    lent = Thing()
    assert table.get(ctypes.c_void_p(table.lend(lent))) is lent
    given = table.give(Thing())
    gc.collect()
    obj = table.get(given)                      # kept alive by the table
    holder = Thing()
    assert table.adopt(given, holder) is obj
    del obj
    gc.collect()
    assert table.get(given) is not None         # the holder keeps it
    del holder
    gc.collect()
    with pytest.raises(MXNetError, match="is not the handle of a live Thing"):
        table.get(given)
    with pytest.raises(MXNetError, match="live Thing"):
        table.get("not a handle")
    assert base.handle_address(ctypes.c_void_p(5)) == 5 and base.handle_address(7) == 7
    assert base.handle_address(True) is None and base.handle_address(None) is None


def test_c_handle_array_takes_as_parameter():
    a, s = mx.nd.ones((1,)), mx.sym.var("q")
    arr = base.c_handle_array([a, s])
    assert arr[0] == ctypes.cast(a, NDArrayHandle).value
    assert arr[1] == s.handle.value


# ---------------------------------------------------------------------- partitioning
def test_build_subgraph_by_op_names_and_errors():
    x = mx.sym.var("x")
    y = mx.sym.sin(mx.sym.exp(x, name="e"), name="s")
    out = SymbolHandle()
    check_call(_LIB.MXBuildSubgraphByOpNames(y.handle, c_str("default"), mx_uint(1),
                                             c_str_array(["exp"]), ctypes.byref(out)))
    nodes = json.loads(mx.sym.Symbol(out).tojson())["nodes"]
    assert [(n["op"], n["name"]) for n in nodes] == [
        ("null", "x"), ("_CachedOp", "_CachedOp0"), ("sin", "s")]
    # no op names: a copy of the symbol
    check_call(_LIB.MXBuildSubgraphByOpNames(y.handle, c_str("default"), mx_uint(0),
                                             c_str_array([]), ctypes.byref(out)))
    assert mx.sym.Symbol(out).tojson() == y.tojson()
    with pytest.raises(MXNetError, match="SubgraphProperty nope is not found"):
        check_call(_LIB.MXBuildSubgraphByOpNames(y.handle, c_str("nope"), mx_uint(1),
                                                 c_str_array(["exp"]), ctypes.byref(out)))
    with pytest.raises(MXNetError, match="SubgraphProperty nope is not found"):
        check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str("nope"), mx_uint(1),
                                                       c_str_array(["exp"])))


def test_gen_backend_subgraph():
    x = mx.sym.var("x")
    y = mx.sym.exp(x, name="e") + 1
    check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str("default_v2"), mx_uint(1),
                                                   c_str_array(["exp"])))
    try:
        out = SymbolHandle()
        check_call(_LIB.MXGenBackendSubgraph(y.handle, c_str("default_v2"), ctypes.byref(out)))
        ops = [n["op"] for n in json.loads(mx.sym.Symbol(out).tojson())["nodes"]]
        assert ops == ["null", "_CachedOp", "_plus_scalar"]
    finally:
        check_call(_LIB.MXRemoveSubgraphPropertyOpNamesV2(c_str("default_v2")))
    with pytest.raises(MXNetError, match="Cannot find attribute op_names"):
        check_call(_LIB.MXGenBackendSubgraph(y.handle, c_str("default_v2"),
                                             ctypes.byref(SymbolHandle())))

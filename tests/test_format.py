"""MXNet's NDArray list files (mxtorch.format.params) and .states pickles
(mxtorch.format.pickle_safe), checked against files written by real MXNet 1.9.1."""
import json
import os
import pickle
import re
import struct

import numpy as np
import pytest

import mxtorch as mx
from helpers import FIXTURES
from mxtorch.base import MXNetError, dtype_np
from mxtorch.format.params import dump_record, dumps, load_record, loads
from mxtorch.format.pickle_safe import OptimizerState, dump_states, load_states

FIX = FIXTURES
ND = os.path.join(FIX, "ndarray")
MODELS = os.path.join(FIX, "models")
BF16 = dtype_np("bfloat16")
MANIFEST = json.load(open(os.path.join(ND, "manifest.json")))
EXPECTED = np.load(os.path.join(ND, "expected.npz"))
LIST_FILES = [f for f in MANIFEST["files"] if f["container"] in ("list", "dict")]
DENSE_FILES = [f for f in LIST_FILES if "sparse" not in f["file"] and "legacy" not in f["file"]]


def _read(name):
    with open(os.path.join(ND, name), "rb") as f:
        return f.read()


def _bf16_to_f32(a):
    return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


# ---------------------------------------------------------------------------- fixtures
@pytest.mark.parametrize("entry", LIST_FILES, ids=lambda e: e["file"])
def test_fixture_loads_expected_values(entry):
    arrays, names = loads(_read(entry["file"]), entry["file"])
    assert len(arrays) == len(entry["arrays"])
    if entry["container"] == "dict":
        assert names == entry["names_in_file_order"]
    else:
        assert names is None
    for arr, meta in zip(arrays, entry["arrays"]):
        assert list(arr.shape) == meta["shape"]
        if meta["dtype"] == "bfloat16":
            assert arr.dtype == BF16
            arr = _bf16_to_f32(arr)
            key = meta["expected_as_float32"]
        else:
            assert arr.dtype == np.dtype(meta["dtype"])
            key = meta.get("expected") or meta["expected_dense"]
        np.testing.assert_array_equal(arr, EXPECTED[key])


@pytest.mark.parametrize("entry", DENSE_FILES, ids=lambda e: e["file"])
def test_fixture_resaves_byte_for_byte(entry):
    blob = _read(entry["file"])
    arrays, names = loads(blob, entry["file"])
    assert dumps(arrays, names, np_semantics=entry["record_version"] == "V3") == blob


def test_int64_beyond_2_53_is_exact():
    arrays, _ = loads(_read("dense_list.params"), "dense_list.params")
    np.testing.assert_array_equal(arrays[6], EXPECTED["dense_list.params.6"])
    assert arrays[6].max() > 2 ** 53


def test_raw_record_and_pickled_ndarray():
    rec = _read("raw_record_f32_2x2.bin")
    np.testing.assert_array_equal(load_record(rec), EXPECTED["raw_record_f32_2x2.bin"])
    assert dump_record(load_record(rec)) == rec
    obj = load_states(_read("pickled_ndarray.pkl"), "pickled_ndarray.pkl")
    assert obj["list"][1] is None
    for arr in (obj["w"], obj["list"][0]):
        assert isinstance(arr, mx.nd.NDArray)
        np.testing.assert_array_equal(arr.asnumpy(), EXPECTED["raw_record_f32_2x2.bin"])


def test_worked_example_bytes():
    blob = dumps([np.array([[1, 2, 3]], dtype=np.float32)], ["w"])
    assert len(blob) == 93
    assert blob[24:28] == bytes.fromhex("c9fa93f9") and blob[-1:] == b"w"


# ---------------------------------------------------------------------------- semantics
def test_v3_refused_in_legacy_semantics():
    blob = _read("np_list.params")
    with pytest.raises(MXNetError, match="np_list.params.*numpy shape semantics"):
        loads(blob, "np_list.params", np_semantics=False)
    arrays, _ = loads(blob, "np_list.params", np_semantics=True)
    assert arrays[0].shape == () and arrays[1].shape == (2, 0, 3)
    legacy, _ = loads(_read("dense_list.params"), "x", np_semantics=True)
    assert len(legacy) == 11


def test_scalar_written_as_v3_zero_size_as_v2():
    assert load_record(dump_record(np.float64(3.5))).shape == ()
    assert struct.unpack("<I", dump_record(np.float64(3.5))[:4])[0] == 0xF993FACA
    # the bytes MXNet 1.9.1's nd.save writes for nd.array(np.zeros((0, 3)))
    blob = bytes.fromhex("120100000000000000000000000000000100000000000000c9fa93f900000000"
                         "0200000000000000000000000300000000000000010000000000000000000000"
                         "0000000000000000")
    assert dumps([np.zeros((0, 3), np.float32)], None) == blob
    assert loads(blob)[0][0].shape == (0, 3)
    with pytest.raises(MXNetError, match="not saved with numpy shape semantics"):
        loads(blob, np_semantics=True, refuse_legacy=True)


def test_unsupported_dtype_refused():
    with pytest.raises(MXNetError, match="complex64"):
        dumps([np.zeros(2, np.complex64)], None)
    with pytest.raises(MXNetError, match="names"):
        dumps([np.zeros(2)], ["a", "b"])


def test_big_endian_input_written_little_endian():
    a = np.arange(4, dtype=">i4")
    assert dumps([a], None) == dumps([a.astype("<i4")], None)


# ---------------------------------------------------------------------------- malformed
def _record_v2(shape, flag, payload):
    return struct.pack(f"<Iii{len(shape)}qiii", 0xF993FAC9, 0, len(shape), *shape, 1, 0,
                       flag) + payload


def _file(records, names=()):
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    return out + b"".join(struct.pack("<Q", len(n)) + n.encode() for n in names)


@pytest.mark.parametrize("blob,pattern", [
    (b"\x00" * 40, "bad header"),
    (b"\x12\x01", "truncated"),
    (_file([_record_v2((2,), 99, b"\x00" * 8)]), "Unknown type enum 99"),
    (_file([_record_v2((2,), 0, b"\x00" * 8)], ["a", "b"]), "name count mismatch"),
    (_file([_record_v2((1 << 40, 1 << 40), 0, b"")]), "truncated.*record 0"),
    (_file([_record_v2((-3,), 0, b"")]), "negative dimension"),
    (_file([struct.pack("<Ii", 0xF993FAC9, 0) + struct.pack("<i", 1 << 30)]), "invalid ndim"),
    (_file([struct.pack("<Ii", 0xF993FAC9, 7)]), "unknown storage type 7"),
    (_file([struct.pack("<I", 0x12345678)]), "unknown record magic"),
    (struct.pack("<QQQ", 0x112, 0, 1 << 62), "array count"),
    (_file([_record_v2((), 0, b"")]), "empty"),
    (_file([struct.pack("<Iii2qi2qiiiii1q", 0xF993FAC9, 1, 2, 0, 1 << 20, 2, 1 << 40, 1 << 20,
                        1, 0, 0, 6, 1, 0)]), "too large to densify"),
])
def test_malformed_blob_raises_clear_error(blob, pattern):
    with pytest.raises(MXNetError, match=pattern) as info:
        loads(blob, "bad.params")
    assert "bad.params" in str(info.value)


def test_truncated_files_raise_naming_file(tmp_path):
    blob = _read("dense_dict.params")
    for cut in (0, 7, 20, 30, 60, 200, len(blob) // 2, len(blob) - 40, len(blob) - 1):
        path = tmp_path / f"cut{cut}.params"
        path.write_bytes(blob[:cut])
        with pytest.raises(MXNetError, match=f"cut{cut}.params") as info:
            mx.nd.load(str(path))
        assert "truncated" in str(info.value) or "bad header" in str(info.value)


def test_every_truncation_of_sparse_file_is_an_error():
    blob = _read("sparse_list.params")
    for cut in range(len(blob)):
        with pytest.raises(MXNetError):
            loads(blob[:cut], "sparse_list.params")


def test_random_garbage_raises(tmp_path):
    rng = np.random.RandomState(0)
    path = tmp_path / "garbage.params"
    path.write_bytes(rng.bytes(4096))
    with pytest.raises(MXNetError, match="garbage.params"):
        mx.nd.load(str(path))
    header = struct.pack("<QQQ", 0x112, 0, 3)
    for seed in range(50):  # valid header, random body: always a clean error
        body = np.random.RandomState(seed).bytes(200)
        with pytest.raises(MXNetError):
            loads(header + body, "fuzz")


def test_csr_inconsistent_indptr_refused():
    blob = bytearray(_read("sparse_dict.params"))
    end = len(blob) - (8 + 8 + len("emb_weight") + 8 + len("adj"))  # names section
    # the csr record ends with its column indices: make the last one out of range
    blob[end - 8:end] = struct.pack("<q", 1 << 40)
    with pytest.raises(MXNetError, match="csr indices out of range"):
        loads(bytes(blob), "corrupt")


# ---------------------------------------------------------------------------- public API
ALL_DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nd_save_load_every_dtype(tmp_path, dtype):
    src = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    path = str(tmp_path / "x.params")
    mx.nd.save(path, [mx.nd.array(src, dtype=dtype)])
    (back,) = mx.nd.load(path)
    assert back.dtype == np.dtype(dtype) and back.shape == (3, 4)
    np.testing.assert_array_equal(back.asnumpy(), src)


def test_nd_save_load_list_dict_single(tmp_path):
    a = mx.nd.array([[1, 2], [3, 4]])
    b = mx.nd.array([5, 6, 7], dtype="int64")
    path = str(tmp_path / "p.params")
    mx.nd.save(path, {"arg:w": a, "aux:b": b})
    back = mx.nd.load(path)
    assert list(back) == ["arg:w", "aux:b"]
    np.testing.assert_array_equal(back["aux:b"].asnumpy(), [5, 6, 7])
    mx.nd.save(path, [a, b])
    assert [x.shape for x in mx.nd.load(path)] == [(2, 2), (3,)]
    mx.nd.save(path, a)
    with open(path, "rb") as f:
        blob = f.read()
    assert blob == dumps([a.asnumpy()], None)
    (single,) = mx.nd.load_frombuffer(blob)
    np.testing.assert_array_equal(single.asnumpy(), a.asnumpy())
    mx.nd.save(path, [])
    assert mx.nd.load(path) == []


def test_nd_load_real_mxnet_file_and_bfloat16(tmp_path):
    back = mx.nd.load(os.path.join(ND, "dense_dict.params"))
    assert "caf\u00e9_\u03bb" in back
    (bf,) = mx.nd.load(os.path.join(ND, "bfloat16_list.params"))
    path = str(tmp_path / "bf.params")
    mx.nd.save(path, [bf])
    assert open(path, "rb").read() == _read("bfloat16_list.params")


def test_nd_load_npy_npz(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "a.npy", x)
    np.savez(tmp_path / "b.npz", x=x, y=np.ones(2, np.int32))
    np.testing.assert_array_equal(mx.nd.load(str(tmp_path / "a.npy")).asnumpy(), x)
    z = mx.nd.load(str(tmp_path / "b.npz"))
    assert sorted(z) == ["x", "y"] and z["y"].dtype == np.int32


def test_ndarray_pickle_roundtrip():
    a = mx.nd.array([[1.5, -2.0]], dtype="float64")
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    assert b.dtype == np.float64
    np.testing.assert_array_equal(load_states(pickle.dumps({"a": a}))["a"].asnumpy(),
                                  a.asnumpy())


# ---------------------------------------------------------------------------- .states
def _states(path):
    with open(os.path.join(MODELS, path), "rb") as f:
        return f.read()


def test_module_states_fixture():
    states = load_states(_states("mlp_module/mlp-0001.states"), "mlp-0001.states")
    expected = np.load(os.path.join(MODELS, "mlp_module/states_expected.npz"))
    assert sorted(states) == list(range(6))
    for i, arr in states.items():
        np.testing.assert_array_equal(arr.asnumpy(), expected[f"momentum.{i}"])


def test_trainer_states_fixture_and_byte_identical_rewrite():
    blob = _states("lenet_gluon/lenet.states")
    states, opt = load_states(blob, "lenet.states")
    expected = np.load(os.path.join(MODELS, "lenet_gluon/states_expected.npz"))
    for i, (mean, var) in states.items():
        np.testing.assert_array_equal(mean.asnumpy(), expected[f"mean.{i}"])
        np.testing.assert_array_equal(var.asnumpy(), expected[f"var.{i}"])
    assert isinstance(opt, OptimizerState) and opt.class_name == "Adam"
    assert (opt.lr, opt.beta1, opt.rescale_grad, opt.num_update) == (0.001, 0.9, 0.5, 1)
    assert opt.state["_index_update_count"] == {i: 1 for i in range(10)}
    # MXNet: pickles emit mxnet's global names; our writer reproduces MXNet's bytes
    assert dump_states((states, opt)) == blob
    mlp = _states("mlp_module/mlp-0001.states")
    assert dump_states(load_states(mlp)) == mlp


def test_dump_states_roundtrip_and_global_names():
    st = {0: mx.nd.array([1, 2]), 1: (mx.nd.array(np.zeros((2, 2))), mx.nd.array(np.ones(3))),
          2: None}
    blob = dump_states(st)
    assert b"mxnet.ndarray.ndarray" in blob and b"mxtorch" not in blob
    back = load_states(blob, "rt")
    assert back[2] is None
    np.testing.assert_array_equal(back[1][1].asnumpy(), np.ones(3))
    old = dump_states(st, protocol=2)
    np.testing.assert_array_equal(load_states(old)[0].asnumpy(), [1, 2])


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/mxtorch_pwned_marker",))


def test_malicious_pickle_refused(tmp_path):
    marker = "/tmp/mxtorch_pwned_marker"
    if os.path.exists(marker):
        os.remove(marker)
    blob = pickle.dumps({0: _Evil()})
    with pytest.raises(MXNetError, match=r"evil.states.*(posix|os)\.system"):
        load_states(blob, "evil.states")
    assert not os.path.exists(marker)
    for target in (eval, getattr, __import__, pickle.loads):
        with pytest.raises(MXNetError, match="refusing"):
            load_states(pickle.dumps(target), "x")


def test_malformed_states_raise():
    with pytest.raises(MXNetError, match="bad.states"):
        load_states(b"\x80\x04garbage", "bad.states")
    with pytest.raises(MXNetError, match="bad.states"):
        load_states(_states("mlp_module/mlp-0001.states")[:100], "bad.states")
    with pytest.raises(MXNetError, match="refusing.*mxnet.ndarray.ndarray._private"):
        load_states(b"\x80\x04\x8c\x15mxnet.ndarray.ndarray\x8c\x08_private\x93.", "y")


# ------------------------------------------------------------- hostile and broken files
# Each runs in a child process whose address space is capped (tests/memcap.py): before
# the loaders checked sizes first, these few-byte files allocated gigabytes.
from memcap import run_loaders  # noqa: E402

_BYTEARRAY_2_30 = b"\x80\x04\x8c\x08builtins\x8c\tbytearray\x93J\x00\x00\x00\x40\x85R."
_LIST_OF_256MIB = (b"\x80\x04\x8c\x08builtins\x8c\x04list\x93\x8c\x08builtins\x8c\tbytearray"
                   b"\x93J\x00\x00\x00\x10\x85R\x85R.")
_HUGE_MEMO_INDEX = b"\x80\x04Nr\xf0\xff\xff\xff."  # LONG_BINPUT 4294967280


def _hostile_states():
    mlp = _states("mlp_module/mlp-0001.states")
    cases = [("bytearray_2_30", _BYTEARRAY_2_30), ("list_256mib", _LIST_OF_256MIB),
             ("huge_memo", _HUGE_MEMO_INDEX)]
    for i in (i for i in range(len(mlp)) if mlp[i] == ord("R")):  # one REDUCE -> LONG_BINPUT
        cases.append((f"mlp_R{i}_r.states", mlp[:i] + b"r" + mlp[i + 1:]))
    return cases


def test_hostile_states_refused_before_allocating():
    cases = _hostile_states()
    assert [len(b) for _, b in cases[:3]] == [32, 51, 9]
    runs = run_loaders([(loader, name, blob) for name, blob in cases
                        for loader in ("states", "updater", "trainer")], cap_mb=512)
    assert len(runs) == 3 * len(cases)
    for run in runs[:9]:  # the three hand-made payloads: refused, never loaded
        assert run["mxnet_error"], run
        assert run["peak"] < 256 << 10 and run["seconds"] < 1, run
    assert "bytearray(int)" in runs[0]["message"]
    assert "memo index 4294967280" in runs[6]["message"]
    for run in runs[9:]:  # an R->r inside array data still loads; elsewhere: refused
        assert run["error"] is None or run["mxnet_error"], run
        assert run["peak"] < 1 << 20 and run["seconds"] < 1, run
    assert sum(r["error"] is not None for r in runs[9:]) >= 3 * 10


def test_constructor_arguments_and_budget_checked():
    for blob in (b"\x80\x04\x8c\x08builtins\x8c\x05bytes\x93K\x10\x85R.",  # bytes(16)
                 b"\x80\x04\x8c\x05numpy\x8c\x07ndarray\x93J\x00\x00\x00\x40\x85\x85R."):
        with pytest.raises(MXNetError, match="refusing"):
            load_states(blob, "ctor.states")
    # list(list) copies are charged: 64 copies of a 4096-element list exceed the budget
    body = b"\x80\x04]" + b"(" + b"N" * 4096 + b"e\x94"
    body += b"\x8c\x08builtins\x8c\x04list\x93\x94" + b"h\x01h\x00\x85R\x94" * 64
    with pytest.raises(MXNetError, match="list would allocate"):
        load_states(body + b".", "copies.states")
    # what a real file holds still loads: numpy scalars and arrays, bytes, sets
    obj = {"s": np.float64(0.5), "a": np.arange(6, dtype=">i4").reshape(2, 3),
           "b": b"xy", "set": {1, 2}, "t": (1, None)}
    for proto in (2, 4):
        back = load_states(pickle.dumps(obj, protocol=proto), "ok.states")
        assert back["s"] == 0.5 and back["b"] == b"xy" and back["set"] == {1, 2}
        np.testing.assert_array_equal(back["a"], obj["a"])
    with pytest.raises(MXNetError, match="not allowed"):
        load_states(pickle.dumps(np.array([1, None], dtype=object)), "obj.states")


@pytest.mark.parametrize("fixture", ["lenet_gluon/lenet.states", "mlp_module/mlp-0001.states"])
def test_states_without_handle_refused(fixture):
    blob = _states(fixture).replace(b"handle", b"handlf")
    with pytest.raises(MXNetError, match="'handle' entry"):
        load_states(blob, fixture)
    updater = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    with pytest.raises(MXNetError, match="'handle' entry"):
        updater.set_states(blob)
    arr = mx.nd.NDArray.__new__(mx.nd.NDArray)
    with pytest.raises(MXNetError, match="'handle' must be bytes"):
        arr.__setstate__({"handle": 3})


@pytest.mark.parametrize("flag", [8, 9, 10, 11])
def test_nd_load_refuses_type_flags_8_to_11(tmp_path, flag):
    path = tmp_path / "f.params"
    path.write_bytes(_file([_record_v2((2,), flag, b"\x00" * 16)]))
    with pytest.raises(MXNetError, match=f"Unknown type enum {flag}"):  # MXNet's message
        mx.nd.load(str(path))
    with pytest.raises(MXNetError, match="cannot load that type"):
        mx.nd.save(str(path), [mx.nd.array([1, 2], dtype=dtype_np(
            ["int16", "uint16", "uint32", "uint64"][flag - 8]))])


def test_zero_size_record_with_huge_dims(tmp_path):
    path = tmp_path / "z.params"
    path.write_bytes(_file([_record_v2((0, 1 << 62), 0, b"")]))
    with pytest.raises(MXNetError, match=r"z.params.*cannot be represented"):
        mx.nd.load(str(path))


def _npy(shape, dtype="<f4", body=b""):
    head = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    head += b" " * (63 - len(head) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + body


def _deflate_bomb(mib):
    """An .npz whose one member is an .npy of ``mib`` MiB of zeros, deflated (~1000x)."""
    import zipfile
    import zlib
    member = _npy((mib << 18,))
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = [comp.compress(member)] + [comp.compress(bytes(1 << 20)) for _ in range(mib)]
    stream.append(comp.flush())
    data = b"".join(stream)
    crc = zlib.crc32(bytes(1 << 20), zlib.crc32(member))
    for _ in range(mib - 1):
        crc = zlib.crc32(bytes(1 << 20), crc)
    info = zipfile.ZipInfo("x.npy")
    info.compress_type = zipfile.ZIP_DEFLATED
    name = info.filename.encode()
    size = len(member) + (mib << 20)
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size,
                        len(name), 0) + name
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(data),
                          size, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central),
                      len(local) + len(data), 0)
    return local + data + central + end


def test_npy_npz_sizes_checked_before_allocating(tmp_path):
    bomb = _deflate_bomb(128)
    assert len(bomb) < 200 << 10
    cases = [("ndload", "huge.npy", _npy((1 << 40,))),               # asks 4 TiB
             ("ndload", "bomb.npz", bomb),                          # 128 KiB -> 128 MiB
             ("ndload", "trunc.npy", _npy((4,), body=b"\x00" * 12)),
             ("ndload", "obj.npy", _npy((2,), "|O", b"\x00" * 16))]
    runs = run_loaders(cases, cap_mb=96)
    for run, pattern in zip(runs, ["asks for shape \\(1099511627776,\\)", "declares",
                                   "holds 12 bytes", "object arrays"]):
        assert run["mxnet_error"] and run["name"] in run["message"], run
        assert re.search(pattern, run["message"]), run
        assert run["peak"] < 1 << 20, run
    np.save(tmp_path / "ok.npy", np.arange(6, dtype=np.int64).reshape(2, 3, order="F"))
    np.savez_compressed(tmp_path / "ok.npz", a=np.zeros((1000, 100)), b=np.arange(3))
    np.testing.assert_array_equal(mx.nd.load(str(tmp_path / "ok.npy")).asnumpy(),
                                  [[0, 2, 4], [1, 3, 5]])
    z = mx.nd.load(str(tmp_path / "ok.npz"))
    assert z["a"].shape == (1000, 100) and list(z["b"].asnumpy()) == [0, 1, 2]
    blob = (tmp_path / "ok.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(blob[:len(blob) // 2])
    with pytest.raises(MXNetError, match="cut.npz"):
        mx.nd.load(str(tmp_path / "cut.npz"))


def test_updater_refuses_deep_or_misshapen_states():
    updater = mx.optimizer.get_updater(mx.optimizer.create("adam"))
    deep = b"\x80\x04" + b"]" * 100000 + b"a" * 99999 + b"."  # a 100,000-deep list
    with pytest.raises(MXNetError, match="nested more than 100 levels"):
        updater.set_states(b"\x80\x04}K\x00" + deep[2:-1] + b"s.")
    with pytest.raises(MXNetError, match="must be a dict"):
        updater.set_states(pickle.dumps([1, 2]))
    with pytest.raises(MXNetError, match="must be an optimizer"):
        updater.set_states(pickle.dumps(({}, 5)))
    updater.set_states(_states("mlp_module/mlp-0001.states"))  # still loads
    assert sorted(updater.states) == list(range(6))

"""mx.recordio: byte compatibility with MXNet 1.9.1's RecordIO and .idx files."""
import os
import pickle

import numpy as np
import pytest

from mxtorch import recordio
from mxtorch.base import MXNetError

FIX = os.path.join(os.path.dirname(__file__), "fixtures_data")
MAGIC = b"\x0a\x23\xd7\xce"
RECORDS = [b"abc", b"", MAGIC, b"xx" + MAGIC + MAGIC, MAGIC + b"1234" + MAGIC + b"z", b"abcd" * 3]
# Bytes of the .rec real MXNet 1.9.1 writes for RECORDS (magic words split the records).
EXPECTED_HEAD = bytes.fromhex("0a23d7ce03000000616263000a23d7ce00000000")


def _write(tmp_path, records):
    rec, idx = str(tmp_path / "t.rec"), str(tmp_path / "t.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    positions = []
    for i, r in enumerate(records):
        positions.append(w.tell())
        w.write_idx(i, r)
    w.close()
    return rec, idx, positions


def test_roundtrip_and_layout(tmp_path):
    rec, idx, positions = _write(tmp_path, RECORDS)
    blob = open(rec, "rb").read()
    assert blob.startswith(EXPECTED_HEAD)
    # record 2 is the bare magic: a first part (cflag 1, len 0) then a last part (cflag 3)
    assert blob[positions[2]:positions[3]] == bytes.fromhex("0a23d7ce000000200a23d7ce00000060")
    assert positions == [0, 12, 20, 36, 56, 88]  # as MXNet 1.9.1 writes them
    assert open(idx).read() == "".join("%d\t%d\n" % (i, p) for i, p in enumerate(positions))
    r = recordio.MXRecordIO(rec, "r")
    assert [r.read() for _ in range(len(RECORDS) + 1)] == RECORDS + [None]
    r.reset()
    assert r.read() == RECORDS[0]
    r.close()
    ri = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert ri.keys == list(range(len(RECORDS)))
    assert ri.read_idx(4) == RECORDS[4] and ri.read() == RECORDS[5]
    with pytest.raises(KeyError):
        ri.read_idx(99)


def test_reads_mxnet_written_file():
    ri = recordio.MXIndexedRecordIO(os.path.join(FIX, "mx_raw.idx"),
                                    os.path.join(FIX, "mx_raw.rec"), "r")
    assert ri.keys == [0, 10, 20, 30, 40]
    assert ri.read_idx(0) == b"hello" and ri.read_idx(10) == b""
    assert ri.read_idx(20) == MAGIC + b"abcd" + MAGIC
    header, payload = recordio.unpack(ri.read_idx(30))
    assert (header.flag, header.id, header.id2, payload) == (3, 7, 3, b"payload")
    np.testing.assert_array_equal(header.label, np.array([1.0, 2.5, -1.0], np.float32))
    header, payload = recordio.unpack(ri.read_idx(40))
    assert header == recordio.IRHeader(0, 4.5, 8, 0) and payload == b"xyz"


def test_writes_what_mxnet_writes(tmp_path):
    w = recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), str(tmp_path / "r.rec"), "w")
    records = [b"hello", b"", MAGIC + b"abcd" + MAGIC,
               recordio.pack(recordio.IRHeader(0, [1.0, 2.5, -1.0], 7, 3), b"payload"),
               recordio.pack(recordio.IRHeader(0, 4.5, 8, 0), b"xyz")]
    for i, r in enumerate(records):
        w.write_idx(i * 10, r)
    w.close()
    for ext in ("rec", "idx"):
        ours = open(tmp_path / ("r." + ext), "rb").read()
        assert ours == open(os.path.join(FIX, "mx_raw." + ext), "rb").read()


def test_pack_unpack():
    packed = recordio.pack(recordio.IRHeader(0, [1, 2], 3, 0), b"xy")
    assert packed == bytes.fromhex("02000000000000000300000000000000"
                                   "0000000000000000" "0000803f00000040") + b"xy"
    header, s = recordio.unpack(packed)
    assert header.flag == 2 and s == b"xy"
    np.testing.assert_array_equal(header.label, [1.0, 2.0])
    header, s = recordio.unpack(recordio.pack(recordio.IRHeader(5, 2.5, 3, 0), b"xy"))
    assert header == recordio.IRHeader(0, 2.5, 3, 0)  # MXNet: flag reset to 0 for scalars


def test_errors(tmp_path):
    with pytest.raises(MXNetError, match="No such file"):
        recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    with pytest.raises(ValueError, match="Invalid flag a"):
        recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    bad = tmp_path / "bad.rec"
    bad.write_bytes(b"garbage garbage!")
    with pytest.raises(MXNetError, match="Invalid RecordIO File"):
        recordio.MXRecordIO(str(bad), "r").read()
    trunc = tmp_path / "trunc.rec"
    trunc.write_bytes(MAGIC + b"\x10\x00\x00\x00abc")
    with pytest.raises(MXNetError, match="Invalid RecordIO File"):
        recordio.MXRecordIO(str(trunc), "r").read()
    w = recordio.MXRecordIO(str(tmp_path / "w.rec"), "w")
    with pytest.raises(TypeError):
        w.write("a str")


def test_pickle_reopens(tmp_path):
    rec, idx, _ = _write(tmp_path, RECORDS)
    ri = recordio.MXIndexedRecordIO(idx, rec, "r")
    ri2 = pickle.loads(pickle.dumps(ri))
    assert ri2.is_open and ri2.read_idx(3) == RECORDS[3]

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


# ---------------------------------------------------------------- damaged records
def test_unpack_short_header_and_labels_raise_mxnet_errors():
    """MXNet's Python unpack raises struct.error / ValueError here; ours are MXNetErrors
    that are those too, with what is wrong."""
    import struct
    with pytest.raises(MXNetError, match="record of 3 bytes is shorter than its 24-byte"):
        recordio.unpack(b"abc")
    with pytest.raises(struct.error):
        recordio.unpack(b"")
    head = struct.pack("IfQQ", 1000, 0, 7, 0)
    with pytest.raises(MXNetError, match="1000 float labels .4000 bytes. but 2 bytes"):
        recordio.unpack(head + b"xx")
    with pytest.raises(ValueError):
        recordio.unpack_img(head + b"xx")
    header, rest = recordio.unpack(struct.pack("IfQQ", 2, 0, 7, 0) + b"\0\0\x80?\0\0\0@tail")
    assert header.label.tolist() == [1.0, 2.0] and rest == b"tail"


def test_image_record_iter_names_the_file_and_record(tmp_path):
    from mxtorch.io.image_record import ImageRecordIter
    path = str(tmp_path / "bad.rec")
    w = recordio.MXRecordIO(path, "w")
    w.write(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), b"x" * 10))
    w.write(b"short")
    w.close()
    with pytest.raises(MXNetError, match=r"bad\.rec, record 1: unpack: a record of 5 bytes"):
        ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 5), batch_size=1)
    w = recordio.MXRecordIO(path, "w")
    w.write(recordio.pack(recordio.IRHeader(0, 1.0, 9, 0), b"not an image"))
    w.close()
    it = ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 5), batch_size=1)
    with pytest.raises(MXNetError, match=r"bad\.rec, record 0 \(id 9\): .*Invalid image file"):
        it.next()


def test_truncated_file_and_bad_index_lines_name_the_file(tmp_path):
    rec, idx, positions = _write(tmp_path, [b"abcd", b"efgh"])
    with open(rec, "r+b") as f:
        f.truncate(positions[1] + 6)
    r = recordio.MXRecordIO(rec, "r")
    assert r.read() == b"abcd"
    with pytest.raises(MXNetError, match=r"t\.rec: the record at byte %d: .*Invalid RecordIO"
                       % positions[1]):
        r.read()
    for line, what in [("0\n", "expected 'key<TAB>offset'"), ("0\tx\n", "expected"),
                       ("0\t-4\n", "negative record offset -4")]:
        with open(idx, "w") as f:
            f.write("1\t0\n" + line)
        with pytest.raises(MXNetError, match=r"t\.idx, line 2: " + what):
            recordio.MXIndexedRecordIO(idx, rec, "r")

"""mx.io: iterators' batches, padding, reset and shuffle, against MXNet 1.9.1's outputs."""
import logging
import struct

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import io
from mxtorch.base import MXNetError

D = np.arange(10).reshape(5, 2).astype("float32")
L = np.arange(5)


def _epoch(it):
    return [(b.data[0].asnumpy()[:, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad, b.index)
            for b in it]


def test_ndarrayiter_pad():
    it = io.NDArrayIter(D, L, batch_size=3, last_batch_handle="pad")
    expected = [([0.0, 2.0, 4.0], [0.0, 1.0, 2.0], 0, None),
                ([6.0, 8.0, 0.0], [3.0, 4.0, 0.0], 1, None)]
    for _ in range(3):
        assert _epoch(it) == expected
        assert it.cursor == 6
        it.reset()
    it = io.NDArrayIter(D, L, batch_size=12)
    assert [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it] == \
        [([0.0, 2.0, 4.0, 6.0, 8.0, 0.0, 2.0, 4.0, 6.0, 8.0, 0.0, 2.0], 7)]
    assert isinstance(it.provide_data[0], io.DataDesc)


def test_ndarrayiter_discard_and_roll_over():
    it = io.NDArrayIter(D, L, batch_size=3, last_batch_handle="discard")
    for _ in range(3):
        assert _epoch(it) == [([0.0, 2.0, 4.0], [0.0, 1.0, 2.0], 0, None)]
        it.reset()
    it = io.NDArrayIter(D, L, batch_size=3, last_batch_handle="roll_over")
    expected = [
        ([([0.0, 2.0, 4.0], [0.0, 1.0, 2.0], 0, None)], 3),
        ([([6.0, 8.0, 0.0], [3.0, 4.0, 0.0], 2, None),
          ([2.0, 4.0, 6.0], [1.0, 2.0, 3.0], 0, None)], 4),
        ([([8.0, 0.0, 2.0], [4.0, 0.0, 1.0], 1, None),
          ([4.0, 6.0, 8.0], [2.0, 3.0, 4.0], 0, None)], 5),
    ]
    for batches, cursor in expected:
        assert _epoch(it) == batches
        assert it.cursor == cursor
        it.reset()
    it.hard_reset()
    assert _epoch(it)[0][0] == [0.0, 2.0, 4.0]


def test_ndarrayiter_names_and_order():
    it = io.NDArrayIter({"b": D, "a": D}, {"z": L}, batch_size=2)
    assert [repr(d) for d in it.provide_data] == [
        "DataDesc[a,(2, 2),<class 'numpy.float32'>,NCHW]",
        "DataDesc[b,(2, 2),<class 'numpy.float32'>,NCHW]"]
    assert repr(it.provide_label[0]) == "DataDesc[z,(2,),<class 'numpy.float32'>,NCHW]"
    it = io.NDArrayIter([D] * 11, batch_size=2)
    assert [x.name for x in it.provide_data] == [
        "_0_data", "_10_data", "_1_data", "_2_data", "_3_data", "_4_data", "_5_data",
        "_6_data", "_7_data", "_8_data", "_9_data"]
    assert it.provide_label == []
    it = io.NDArrayIter(np.arange(6, dtype="int32"), batch_size=4)
    b = it.next()
    assert b.data[0].dtype == np.float32 and it.provide_data[0].shape == (4,)
    assert b.label == [] and str(b) == "DataBatch: data shapes: [(4,)] label shapes: None"
    it = io.NDArrayIter(mx.nd.array(np.zeros((5, 4, 3))), batch_size=2, layout="TNC")
    assert it.provide_data[0].shape == (5, 2, 3)
    assert it.next().data[0].shape == (5, 2, 3)
    with pytest.raises(TypeError, match="Input must be NDArray"):
        io.NDArrayIter("bad", batch_size=1)


def test_ndarrayiter_shuffle_matches_mxnet():
    np.random.seed(3)
    it = io.NDArrayIter(D, L, batch_size=2, shuffle=True)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[3.0, 4.0], [1.0, 0.0], [2.0, 3.0]]
    it.reset()
    assert [b.label[0].asnumpy().tolist() for b in it] == [[4.0, 2.0], [3.0, 1.0], [0.0, 4.0]]
    it.reset()
    for b in it:   # data and label stay aligned
        np.testing.assert_array_equal(b.data[0].asnumpy()[:, 0], 2 * b.label[0].asnumpy())


def test_ndarrayiter_getters():
    it = io.NDArrayIter(D, L, batch_size=2)
    it.next()
    np.testing.assert_array_equal(it.getdata()[0].asnumpy(), [[0, 1], [2, 3]])
    assert it.getpad() == 0 and it.getindex() is None
    assert it.iter_next() and it.iter_next() and not it.iter_next()


def test_resize_and_prefetching():
    r = io.ResizeIter(io.NDArrayIter(D, L, batch_size=2), 5)
    assert [(b.label[0].asnumpy().tolist(), b.pad) for b in r] == [
        ([0.0, 1.0], 0), ([2.0, 3.0], 0), ([4.0, 0.0], 1), ([0.0, 1.0], 0), ([2.0, 3.0], 0)]
    assert r.batch_size == 2
    p = io.PrefetchingIter([io.NDArrayIter(D, L, batch_size=2),
                            io.NDArrayIter(D, L, batch_size=2, data_name="x", label_name="y")],
                           rename_data=[{"data": "d1"}, {"x": "d2"}])
    assert [d.name for d in p.provide_data] == ["d1", "d2"]
    assert [d.name for d in p.provide_label] == ["softmax_label", "y"]
    assert p.batch_size == 2
    assert [(len(b.data), b.label[1].asnumpy().tolist(), b.pad) for b in p] == [
        (2, [0.0, 1.0], 0), (2, [2.0, 3.0], 0), (2, [4.0, 0.0], 1)]
    p.reset()
    assert len(list(p)) == 3
    single = io.PrefetchingIter(io.NDArrayIter(D, L, batch_size=5))
    assert len(list(single)) == 1


class _BreaksOnSecond(io.NDArrayIter):
    def next(self):
        batch = super().next()
        if batch.label[0].asnumpy()[0] == 2:
            raise ValueError("the source broke at batch 2")
        return batch


def test_prefetching_iter_raises_its_source_error():
    """An exception in the prefetching thread reaches the consumer (it used to wait
    forever); the iterator goes on with the next batch."""
    p = io.PrefetchingIter(_BreaksOnSecond(D, L, batch_size=2))
    assert p.next().label[0].asnumpy().tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="broke at batch 2"):
        p.next()
    assert p.next().label[0].asnumpy().tolist() == [4.0, 0.0]
    with pytest.raises(StopIteration):
        p.next()


def test_datadesc_databatch():
    d = io.DataDesc("x", (2, 3))
    assert repr(d) == str(d) == "DataDesc[x,(2, 3),<class 'numpy.float32'>,NCHW]"
    assert d == ("x", (2, 3)) and d.layout == "NCHW"
    assert io.DataDesc.get_batch_axis("TNC") == 1 and io.DataDesc.get_batch_axis(None) == 0
    lst = io.DataDesc.get_list([("a", (1, 2))], [("a", "int32")])
    assert repr(lst) == "[DataDesc[a,(1, 2),int32,NCHW]]"
    b = io.DataBatch([mx.nd.array(np.zeros((2, 3)))])
    assert str(b) == "DataBatch: data shapes: [(2, 3)] label shapes: None"
    with pytest.raises(AssertionError, match="Data must be list of NDArrays"):
        io.DataBatch(mx.nd.array([1.0]))


def _write_csv(tmp_path):
    np.savetxt(tmp_path / "d.csv", np.arange(14).reshape(7, 2), delimiter=",", fmt="%d")
    np.savetxt(tmp_path / "l.csv", np.arange(7), delimiter=",", fmt="%d")
    return str(tmp_path / "d.csv"), str(tmp_path / "l.csv")


def test_csviter_round_batch(tmp_path):
    data, label = _write_csv(tmp_path)
    it = io.CSVIter(data_csv=data, data_shape=(2,), label_csv=label, batch_size=3)
    assert repr(it.provide_data) == "[DataDesc[data,(3, 2),<class 'numpy.float32'>,NCHW]]"
    assert it.provide_label[0].shape == (3,) and it.batch_size == 3
    seen = []
    for _ in range(3):
        seen.append([(b.label[0].asnumpy().tolist(), b.pad, b.index.tolist()) for b in it])
        it.reset()
    # MXNet: the wrapped-around samples are skipped at the start of the next epoch.
    assert seen == [
        [([0, 1, 2], 0, [0, 1, 2]), ([3, 4, 5], 0, [3, 4, 5]), ([6, 0, 1], 2, [6, 0, 1])],
        [([2, 3, 4], 0, [2, 3, 4]), ([5, 6, 0], 1, [5, 6, 0])],
        [([1, 2, 3], 0, [1, 2, 3]), ([4, 5, 6], 0, [4, 5, 6])]]
    it = io.CSVIter(data_csv=data, data_shape=(2,), batch_size=3)
    first = it.next()
    np.testing.assert_array_equal(first.data[0].asnumpy(), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(first.label[0].asnumpy(), [0, 0, 0])


def test_csviter_no_round_batch_and_errors(tmp_path):
    data, label = _write_csv(tmp_path)
    it = io.CSVIter(data_csv=data, data_shape=(2,), label_csv=label, batch_size=3,
                    round_batch=False)
    for _ in range(2):
        batches = list(it)
        it.reset()
        last = batches[-1]
        # MXNet: padded rows keep the previous batch's content.
        assert last.data[0].asnumpy().tolist() == [[12, 13], [8, 9], [10, 11]]
        assert last.label[0].asnumpy().tolist() == [6, 4, 5] and last.pad == 2
    with pytest.raises(MXNetError, match="nofile.csv"):
        io.CSVIter(data_csv=str(tmp_path / "nofile.csv"), data_shape=(2,), batch_size=3)
    with pytest.raises(MXNetError, match="number of input must be bigger than batch size"):
        io.CSVIter(data_csv=data, data_shape=(2,), batch_size=30)
    it = io.CSVIter(data_csv=data, data_shape=(1, 2), label_csv=data, label_shape=(2,),
                    batch_size=7)
    assert it.provide_data[0].shape == (7, 1, 2) and it.provide_label[0].shape == (7, 2)
    (tmp_path / "short.csv").write_text("1\n2\n")
    with pytest.raises(MXNetError, match="has 2 rows but .*d.csv has 7"):
        io.CSVIter(data_csv=data, data_shape=(2,), label_csv=str(tmp_path / "short.csv"),
                   batch_size=3)


def test_csviter_directory(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.csv").write_text("1,2\n3,4\n")
    (tmp_path / "dir" / "b.csv").write_text("5,6\n")
    it = io.CSVIter(data_csv=str(tmp_path / "dir"), data_shape=(2,), batch_size=3)
    assert it.next().data[0].asnumpy().tolist() == [[1, 2], [3, 4], [5, 6]]


def _write_mnist(tmp_path, n=7):
    imgs = (np.arange(n * 16) % 256).astype(np.uint8).reshape(n, 4, 4)
    with open(tmp_path / "img", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 4, 4) + imgs.tobytes())
    with open(tmp_path / "lab", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + np.arange(n, dtype=np.uint8).tobytes())
    return str(tmp_path / "img"), str(tmp_path / "lab")


def test_mnistiter(tmp_path, caplog):
    img, lab = _write_mnist(tmp_path)
    with caplog.at_level(logging.INFO):
        it = io.MNISTIter(image=img, label=lab, batch_size=3, shuffle=False)
    assert "MNISTIter: load 7 images, shuffle=0, shape=[3,1,4,4]" in caplog.text
    assert it.provide_data[0].shape == (3, 1, 4, 4) and it.provide_label[0].shape == (3,)
    for _ in range(2):
        batches = list(it)
        it.reset()
        assert [b.label[0].asnumpy().tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
        # MXNet scales by 1/256
        np.testing.assert_allclose(batches[0].data[0].asnumpy()[1, 0, 0, :3],
                                   [0.0625, 0.06640625, 0.0703125])
        assert batches[0].pad == 0 and batches[0].index.tolist() == [0, 0, 0]
    caplog.clear()
    with caplog.at_level(logging.INFO):
        it = io.MNISTIter(image=img, label=lab, batch_size=3, flat=True, silent=True)
    assert caplog.text == "" and it.provide_data[0].shape == (3, 16)
    labels = sorted(sum([b.label[0].asnumpy().tolist() for b in it], []))
    assert len(labels) == 6 and set(labels) <= set(range(7))
    it = io.MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, num_parts=2,
                      part_index=1)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[3, 4, 5]]


def test_mnistiter_errors(tmp_path):
    img, lab = _write_mnist(tmp_path)
    with pytest.raises(MXNetError, match='Open ".*nope"'):
        io.MNISTIter(image=str(tmp_path / "nope"), label=lab)
    with pytest.raises(MXNetError, match="not an MNIST idx file"):
        io.MNISTIter(image=img, label=img)
    (tmp_path / "short").write_bytes(open(img, "rb").read()[:40])
    with pytest.raises(MXNetError, match="truncated"):
        io.MNISTIter(image=str(tmp_path / "short"), label=lab)


def test_libsvmiter(tmp_path):
    (tmp_path / "s.libsvm").write_text("1 0:1.5 3:2\n0 1:1\n2 2:3.5 0:-1\n1\n0 3:4\n")
    (tmp_path / "sl.libsvm").write_text("0 0:1 1:2\n0 1:3\n0 0:5\n0 1:6\n0 0:7\n")
    it = io.LibSVMIter(data_libsvm=str(tmp_path / "s.libsvm"), data_shape=(4,), batch_size=2)
    assert it.provide_data[0].shape == (2, 4) and it.provide_label[0].shape == (2,)
    got = []
    for _ in range(2):
        got.append([(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad)
                    for b in it])
        it.reset()
    assert got == [
        [([[1.5, 0, 0, 2], [0, 1, 0, 0]], [1, 0], 0), ([[-1, 0, 3.5, 0], [0, 0, 0, 0]], [2, 1], 0),
         ([[0, 0, 0, 4], [1.5, 0, 0, 2]], [0, 1], 1)],
        [([[0, 1, 0, 0], [-1, 0, 3.5, 0]], [0, 2], 0), ([[0, 0, 0, 0], [0, 0, 0, 4]], [1, 0], 0)]]
    it = io.LibSVMIter(data_libsvm=str(tmp_path / "s.libsvm"), data_shape=(4,),
                       label_libsvm=str(tmp_path / "sl.libsvm"), label_shape=(2,), batch_size=2)
    assert it.provide_label[0].shape == (2, 2)
    assert [b.label[0].asnumpy().tolist() for b in it] == [
        [[1, 2], [0, 3]], [[5, 0], [0, 6]], [[7, 0], [1, 2]]]
    with pytest.raises(MXNetError, match="round_batch == false"):
        io.LibSVMIter(data_libsvm=str(tmp_path / "s.libsvm"), data_shape=(4,), batch_size=2,
                      round_batch=False)
    with pytest.raises(MXNetError, match="out of range"):
        io.LibSVMIter(data_libsvm=str(tmp_path / "s.libsvm"), data_shape=(3,), batch_size=2)


@pytest.mark.parametrize("as_ndarray", [False, True])
def test_ndarrayiter_batches_are_copies(as_ndarray):
    # MXNet 1.9.1: writing into a batch leaves the iterator's data alone.
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    it = io.NDArrayIter(mx.nd.array(x) if as_ndarray else x, np.zeros(6), batch_size=2)
    next(it).data[0][:] = -1
    it.reset()
    np.testing.assert_array_equal(next(it).data[0].asnumpy(), [[0, 1], [2, 3]])


# ---------------------------------------------------------------------------- ImageRecord
def _imgrec_expected():
    import os
    fix = os.path.join(os.path.dirname(__file__), "fixtures_data")
    return os.path.join(fix, "mx_img.rec"), np.load(os.path.join(fix, "mx_imgrec_variants.npz"))


@pytest.mark.parametrize("tag, make, kwargs, atol", [
    ("u8", "ImageRecordUInt8Iter", dict(data_shape=(3, 4, 6), batch_size=2, mean_r=10), 0),
    ("i8", "ImageRecordInt8Iter", dict(data_shape=(3, 4, 6), batch_size=2, mean_r=10.4,
                                       mean_g=200, mean_b=30), 0),
    ("mir", "ImageRecordIter", dict(data_shape=(3, 4, 6), batch_size=4, mirror=True,
                                    scale=0.5), 0),
    ("dt", "ImageRecordIter", dict(data_shape=(3, 4, 6), batch_size=4, dtype="uint8",
                                   mean_r=5), 0),
    ("v1", "ImageRecordIter_v1", dict(data_shape=(3, 4, 6), batch_size=4, mean_r=5), 0),
    ("u8v1", "ImageRecordUInt8Iter_v1", dict(data_shape=(3, 4, 6), batch_size=4), 0),
    # bilinear resizing rounds a few pixels one unit away from OpenCV's fixed-point kernel
    ("rs", "ImageRecordIter", dict(data_shape=(3, 4, 4), batch_size=2, resize=4), 1),
    ("big", "ImageRecordIter", dict(data_shape=(3, 8, 8), batch_size=2), 1),
])
def test_image_record_iter_variants_match_mxnet(tag, make, kwargs, atol):
    pytest.importorskip("PIL")
    rec, expected = _imgrec_expected()
    it = getattr(io.io, make)(path_imgrec=rec, **kwargs)
    batch = it.next()
    want = expected["%s_data0" % tag]
    got = batch.data[0].asnumpy()
    assert got.dtype == want.dtype and it.provide_data[0].dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want, atol=atol)
    if "%s_data1" % tag in expected:
        np.testing.assert_array_equal(it.next().data[0].asnumpy(), expected["%s_data1" % tag])


def test_image_record_iter_rejects_other_dtypes():
    rec, _ = _imgrec_expected()
    with pytest.raises(MXNetError, match="dtype"):
        io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 4, 6), batch_size=2, dtype="float16")


def test_io_module_holds_every_iterator():
    for name in ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "MXDataIter", "CSVIter",
                 "MNISTIter", "LibSVMIter", "ImageRecordIter", "ImageRecordUInt8Iter",
                 "ImageRecordInt8Iter", "ImageRecordIter_v1", "ImageRecordUInt8Iter_v1"]:
        assert getattr(io.io, name) is getattr(mx.io, name)


# ---------------------------------------------------------------- ImageDetRecordIter
def _det_rec(tmp_path):
    from helpers import make_det_dataset
    from mxtorch.format import image_codec as _codec
    if not _codec.available():
        pytest.skip("needs Pillow or OpenCV (pip install pillow)")
    return make_det_dataset(tmp_path)["rec"]


def _det_row(c, h, w, raw, width=21, pad=-1.0):
    return [c, h, w, len(raw)] + list(raw) + [pad] * (width - 4 - len(raw))


def test_image_det_record_iter_labels_and_round_batch_match_mxnet(tmp_path):
    from helpers import DET_LABELS
    rec = _det_rec(tmp_path)
    it = io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 5, 7), batch_size=2)
    assert it.provide_data[0].shape == (2, 3, 5, 7)
    assert it.provide_label[0].name == "softmax_label"
    assert it.provide_label[0].shape == (2, 21)   # 4 + the longest raw label (17)
    rows = [_det_row(3, 5, 7, raw) for raw in DET_LABELS]
    # MXNet 1.9.1: the round batch takes record 0 again and the next epoch starts after it
    epochs = []
    for _ in range(2):
        epochs.append([(b.pad, b.label[0].asnumpy()) for b in it])
        it.reset()
    assert [p for p, _ in epochs[0]] == [0, 1] and [p for p, _ in epochs[1]] == [0]
    np.testing.assert_allclose(epochs[0][0][1], rows[:2], rtol=1e-6)
    np.testing.assert_allclose(epochs[0][1][1], [rows[2], rows[0]], rtol=1e-6)
    np.testing.assert_allclose(epochs[1][0][1], rows[1:], rtol=1e-6)


def test_image_det_record_iter_label_padding_and_no_round_batch(tmp_path):
    from helpers import DET_LABELS
    rec = _det_rec(tmp_path)
    it = io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 5, 7), batch_size=2,
                               label_pad_width=20, label_pad_value=-2, round_batch=False)
    assert it.provide_label[0].shape == (2, 24)
    first, last = list(it)
    np.testing.assert_allclose(first.label[0].asnumpy(),
                               [_det_row(3, 5, 7, r, 24, -2) for r in DET_LABELS[:2]], rtol=1e-6)
    # MXNet: the row past the data keeps the previous batch's content; pad says so
    assert last.pad == 1
    np.testing.assert_allclose(last.label[0].asnumpy(),
                               [_det_row(3, 5, 7, r, 24, -2) for r in DET_LABELS[2:0:-1]],
                               rtol=1e-6)
    it.reset()
    assert [b.pad for b in it] == [0, 1]   # without round_batch every epoch starts at 0


def test_image_det_record_iter_images_match_mxnet(tmp_path):
    rec = _det_rec(tmp_path)
    def make(**kw):
        return io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 5, 7), batch_size=3, **kw)
    # normalization: (pixel - mean) * scale / std, a std of 0 meaning 1
    data = make(mean_r=10, std_g=2, scale=0.5).next().data[0].asnumpy()
    np.testing.assert_allclose(data[0, :, 0, :3], [[60, 64.5, 47.5], [43.75, 33.75, 52.25],
                                                   [71, 87, 99]])
    # shrink keeps the aspect ratio; the label's height/width are the content's
    batch = make(resize_mode="shrink").next()
    assert batch.label[0].asnumpy()[:, 1:3].tolist() == [[5, 6], [5, 5], [5, 4]]
    assert batch.data[0].asnumpy()[0, 0, 0].tolist() == [131, 127, 102, 127, 116, 199, 0]
    assert make(resize_mode="fit").next().label[0].asnumpy()[:, 1:3].tolist() == \
        [[5, 6], [5, 5], [5, 4]]
    big = io.ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 12, 12), batch_size=3,
                                resize_mode="shrink")
    assert big.next().label[0].asnumpy()[:, 1:3].tolist() == [[6, 8], [8, 8], [10, 8]]
    # mirroring flips the pixels and the boxes
    batch = make(rand_mirror_prob=1.0).next()
    assert batch.data[0].asnumpy()[0, 0, 0].tolist() == [199, 162, 75, 123, 105, 139, 130]
    np.testing.assert_allclose(batch.label[0].asnumpy()[2, 4:21],
                               [2, 5, 3, .6, .2, .8, .9, 1, .7, .1, .9, .3, 0, .1, .6, .4, .8],
                               atol=1e-6)
    gray = io.ImageDetRecordIter(path_imgrec=rec, data_shape=(1, 5, 7), batch_size=3)
    batch = gray.next()
    assert batch.data[0].shape == (3, 1, 5, 7) and batch.label[0].asnumpy()[0, 0] == 1


@pytest.mark.parametrize("kwargs,match", [
    (dict(label_width=7), "provide 12-dimensional label but label_width is set to 7"),
    (dict(label_pad_width=10), "label_pad_width: 10 smaller than estimated width: 17"),
    (dict(data_shape=(3, 5)), "data_shape must be"),
    (dict(resize_mode="stretch"), "resize_mode must be one of"),
    (dict(dtype="uint8"), "dtype uint8 is not supported"),
    (dict(rand_crop_prob=0.5), "rand_crop_prob=0.5 is not supported"),
    (dict(no_such_arg=1), "Cannot find argument 'no_such_arg'"),
])
def test_image_det_record_iter_errors(tmp_path, kwargs, match):
    args = dict(path_imgrec=_det_rec(tmp_path), data_shape=(3, 5, 7), batch_size=2)
    args.update(kwargs)
    with pytest.raises(MXNetError, match=match):
        io.ImageDetRecordIter(**args)


def test_image_det_record_iter_missing_file(tmp_path):
    with pytest.raises(MXNetError, match="cannot open"):
        io.ImageDetRecordIter(path_imgrec=str(tmp_path / "none.rec"), data_shape=(3, 4, 4),
                              batch_size=1)

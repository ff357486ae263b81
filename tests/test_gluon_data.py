"""gluon.data: datasets, samplers, DataLoader (in-process and worker pools), vision readers."""
import gzip
import os
import signal
import struct
import time

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
import mxtorch.gluon.data as gdata
from mxtorch import recordio


def _batches(loader):
    out = []
    for b in loader:
        out.append([x.asnumpy() for x in b] if isinstance(b, list) else b.asnumpy())
    return out


def test_samplers():
    assert list(gdata.SequentialSampler(4, start=2)) == [2, 3, 4, 5]
    np.random.seed(3)
    idx = list(gdata.RandomSampler(6))
    assert sorted(idx) == list(range(6)) and len(gdata.RandomSampler(6)) == 6
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 3, "keep")
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(bs) == 4
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 3, "discard")
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(bs) == 3
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 3, "rollover")
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(bs) == 3  # (1 carried + 10) // 3
    assert list(bs)[0] == [9, 0, 1]
    with pytest.raises(ValueError, match="last_batch must be one of"):
        list(gdata.BatchSampler(gdata.SequentialSampler(4), 3, "bad"))
    assert list(gdata.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(gdata.IntervalSampler(13, 3, rollover=False)) == [0, 3, 6, 9, 12]
    fs = gdata.FilterSampler(lambda x: x % 2 == 0, list(range(7)))
    assert list(fs) == [0, 2, 4, 6] and len(fs) == 4


def test_datasets():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = mx.nd.arange(10)
    ds = gdata.ArrayDataset(x, y)
    assert len(ds) == 10
    d, lab = ds[3]
    np.testing.assert_array_equal(d, [6, 7])
    assert isinstance(lab, np.float32) and lab == 3  # MXNet: 1-D NDArray kept as NumPy
    t = ds.transform_first(lambda a: a * 2)
    np.testing.assert_array_equal(t[1][0], [4, 6])
    assert t[1][1] == 1
    eager = ds.transform(lambda a, b: b, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset) and eager[4] == 4
    simple = gdata.SimpleDataset(list(range(10)))
    assert [simple.shard(3, i)[:] if False else list(simple.shard(3, i)) for i in range(3)] \
        == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(simple.take(3)) == [0, 1, 2] and len(simple.take(None)) == 10
    assert list(simple.filter(lambda v: v > 6)) == [7, 8, 9]
    assert list(simple.sample(gdata.IntervalSampler(10, 5))) == [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]
    with pytest.raises(TypeError, match="Invalid sampler type"):
        simple.sample([1, 2])
    with pytest.raises(AssertionError, match="same length"):
        gdata.ArrayDataset(x, np.arange(3))


def test_dataloader_modes():
    ds = gdata.ArrayDataset(np.arange(10, dtype=np.float32), np.arange(10, dtype=np.int32))
    dl = gdata.DataLoader(ds, batch_size=4)
    out = _batches(dl)
    assert len(dl) == 3 and len(out) == 3
    np.testing.assert_array_equal(out[2][0], [8, 9])
    assert out[0][1].dtype == np.int32 and out[0][0].dtype == np.float32
    out = _batches(gdata.DataLoader(ds, batch_size=4, last_batch="discard"))
    assert len(out) == 2
    dl = gdata.DataLoader(ds, batch_size=4, last_batch="rollover")
    assert [b[0].tolist() for b in _batches(dl)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [b[0].tolist() for b in _batches(dl)][0] == [8, 9, 0, 1]
    np.random.seed(0)
    shuffled = np.concatenate([b[0] for b in _batches(gdata.DataLoader(ds, 3, shuffle=True))])
    assert sorted(shuffled.tolist()) == list(range(10)) and shuffled.tolist() != list(range(10))
    nd_ds = gdata.SimpleDataset([mx.nd.ones((2, 3)) * i for i in range(5)])
    b = next(iter(gdata.DataLoader(nd_ds, batch_size=5)))
    assert isinstance(b, mx.nd.NDArray) and b.shape == (5, 2, 3)
    np.testing.assert_array_equal(b.asnumpy()[:, 0, 0], np.arange(5))
    bsamp = gdata.BatchSampler(gdata.SequentialSampler(10), 5)
    assert len(_batches(gdata.DataLoader(ds, batch_sampler=bsamp))) == 2
    with pytest.raises(ValueError, match="batch_size must be specified"):
        gdata.DataLoader(ds)
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        gdata.DataLoader(ds, batch_size=2, batch_sampler=bsamp)
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        gdata.DataLoader(ds, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(10))


class _Squares(gdata.Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, idx):
        return mx.nd.full((2,), idx * idx), idx


class _Failing(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 5:
            raise ValueError("sample 5 is broken")
        return np.float32(idx)


class _Slow(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        time.sleep(5)
        return np.float32(idx)


def test_dataloader_workers_match():
    ds = _Squares()
    ref = _batches(gdata.DataLoader(ds, batch_size=5, last_batch="keep"))
    for kw in ({"num_workers": 2}, {"num_workers": 2, "thread_pool": True},
               {"num_workers": 2, "prefetch": 0}):
        dl = gdata.DataLoader(ds, batch_size=5, **kw)
        for _ in range(2):  # two epochs through the same pool
            got = _batches(dl)
            assert len(got) == len(ref) == 5
            for g, r in zip(got, ref):
                np.testing.assert_array_equal(g[0], r[0])
                np.testing.assert_array_equal(g[1], r[1])
                assert g[1].dtype == r[1].dtype and g[0].dtype == r[0].dtype


def test_dataloader_worker_error_surfaces():
    dl = gdata.DataLoader(_Failing(), batch_size=2, num_workers=2, timeout=20)
    start = time.time()
    with pytest.raises(ValueError, match="sample 5 is broken"):
        _batches(dl)
    assert time.time() - start < 15


def test_dataloader_worker_timeout():
    import multiprocessing
    dl = gdata.DataLoader(_Slow(), batch_size=2, num_workers=1, timeout=1)
    try:
        with pytest.raises(multiprocessing.TimeoutError):
            _batches(dl)
    finally:
        dl._worker_pool.terminate()


class _Dies(gdata.Dataset):
    """Its worker process ends at sample 5: killed, or exiting from user code."""

    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 8

    def __getitem__(self, idx):
        if idx == 5:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise SystemExit(3)
        return np.float32(idx)


@pytest.mark.parametrize("how, match", [("kill", "signal SIGKILL"), ("exit", "exit code 3")])
def test_dataloader_worker_death_raises(how, match):
    """A dead worker's batch never comes: the consumer raises at once (well within the
    default timeout of 120 s) naming the worker and how it ended."""
    dl = gdata.DataLoader(_Dies(how), batch_size=2, num_workers=2)
    start = time.time()
    with pytest.raises(MXNetError, match=r"DataLoader worker \(pid \d+\) exited "
                       f"unexpectedly \\({match}\\)"):
        _batches(dl)
    assert time.time() - start < 5


def _write_idx(path, magic, arr):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in arr.shape))
        f.write(arr.tobytes())


def test_mnist_reader(tmp_path):
    rng = np.random.RandomState(0)
    imgs = rng.randint(0, 256, (3, 28, 28)).astype(np.uint8)
    labels = np.array([7, 0, 9], np.uint8)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 2051, imgs)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", 2049, labels)
    ds = gdata.vision.MNIST(root=str(tmp_path), train=False)
    assert len(ds) == 3
    img, lab = ds[2]
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8 and lab == 9
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], imgs[2])
    ds = gdata.vision.FashionMNIST(root=str(tmp_path), train=False,
                                   transform=lambda d, lab: (d.astype("float32") / 255, lab + 1))
    assert ds[0][1] == 8
    with pytest.raises(MXNetError, match="train-images-idx3-ubyte.gz.*" + str(tmp_path)):
        gdata.vision.MNIST(root=str(tmp_path), train=True)


def test_cifar_readers(tmp_path):
    rng = np.random.RandomState(1)
    pix = rng.randint(0, 256, (2, 3072)).astype(np.uint8)
    rows = np.concatenate([np.array([[3], [8]], np.uint8), pix], axis=1)
    (tmp_path / "test_batch.bin").write_bytes(rows.tobytes())
    ds = gdata.vision.CIFAR10(root=str(tmp_path), train=False)
    img, lab = ds[1]
    assert img.shape == (32, 32, 3) and lab == 8 and ds._label.dtype == np.int32
    np.testing.assert_array_equal(img.asnumpy(), pix[1].reshape(3, 32, 32).transpose(1, 2, 0))
    rows100 = np.concatenate([np.array([[1, 42]], np.uint8), pix[:1]], axis=1)
    os.makedirs(tmp_path / "c100")
    (tmp_path / "c100" / "train.bin").write_bytes(rows100.tobytes())
    assert gdata.vision.CIFAR100(root=str(tmp_path / "c100"))[0][1] == 1
    assert gdata.vision.CIFAR100(root=str(tmp_path / "c100"), fine_label=True)[0][1] == 42
    with pytest.raises(MXNetError, match="data_batch_1.bin.*cifar-10-binary.tar.gz"):
        gdata.vision.CIFAR10(root=str(tmp_path), train=True)


def _join_bytes(samples):
    return b"".join(samples)


def test_record_file_dataset(tmp_path):
    rec = str(tmp_path / "d.rec")
    w = recordio.MXIndexedRecordIO(str(tmp_path / "d.idx"), rec, "w")
    for i in range(5):
        w.write_idx(i, b"rec%d" % i)
    w.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 5 and ds[3] == b"rec3"
    got = [bytes(b) for b in gdata.DataLoader(ds, batch_size=2, num_workers=2,
                                              batchify_fn=_join_bytes)]
    assert got == [b"rec0rec1", b"rec2rec3", b"rec4"]


@pytest.fixture
def np_mode():
    mx.npx.set_np()
    try:
        yield
    finally:
        mx.npx.reset_np()


def test_dataloader_yields_numpy_arrays_in_numpy_mode(np_mode, tmp_path):
    """Under npx.set_np() batches are mx.np.ndarray (as MXNet), in-process and from
    process or thread workers, from NumPy data, Python numbers and transforms."""
    from mxtorch.gluon.data.vision import transforms
    x = np.arange(40, dtype="float32").reshape(10, 4)
    y = np.arange(10, dtype="int32")
    for kw in ({}, {"num_workers": 2}, {"num_workers": 2, "thread_pool": True}):
        batch = next(iter(gdata.DataLoader(gdata.ArrayDataset(x, y), batch_size=4, **kw)))
        assert all(isinstance(b, mx.np.ndarray) for b in batch), kw
        assert int(batch[0][1, 2]) == 6 and batch[1].dtype == np.int32
        np.testing.assert_array_equal(batch[0].asnumpy(), x[:4])
    ints = next(iter(gdata.DataLoader(gdata.SimpleDataset(list(range(10))), batch_size=3)))
    assert isinstance(ints, mx.np.ndarray) and ints.dtype == np.int64
    imgs = gdata.SimpleDataset([(mx.np.array(np.full((4, 4, 3), i, "uint8"), dtype="uint8"), i)
                                for i in range(4)])
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
    data, label = next(iter(gdata.DataLoader(imgs.transform_first(tf), batch_size=2)))
    assert isinstance(data, mx.np.ndarray) and isinstance(label, mx.np.ndarray)
    assert data.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(data.asnumpy()[1, 0, 0, 0], (1 / 255 - 0.5) / 0.25, rtol=1e-6)
    assert isinstance(gdata.dataloader.default_batchify_fn([np.ones(2), np.ones(2)]),
                      mx.np.ndarray)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", 2051, np.zeros((2, 28, 28), np.uint8))
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", 2049, np.array([7, 3], np.uint8))
    img, lab = gdata.vision.MNIST(root=str(tmp_path), train=False)[1]
    assert isinstance(img, mx.np.ndarray) and isinstance(lab, mx.np.ndarray)
    assert int(lab) == 3 and lab.dtype == np.int32
    assert isinstance(mx.image.imresize(img, 14, 14), mx.np.ndarray)

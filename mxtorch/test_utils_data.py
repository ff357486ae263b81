"""Data helpers of ``mx.test_utils``: download, the MNIST/CIFAR-10 fetchers and iterators,
``DummyIter`` (re-exported there)."""
from __future__ import annotations

import bz2
import errno
import gzip
import logging
import os
import shutil
import struct
import tempfile
import time
import urllib.request
import zipfile

import numpy as np

from . import io as _io

_LOG = logging.getLogger(__name__)

__all__ = ["download", "download_model", "get_mnist", "get_mnist_pkl", "get_mnist_ubyte",
           "get_cifar10", "get_mnist_iterator", "get_zip_data", "get_bz2_data", "DummyIter",
           "get_im2rec_path"]

_DATA_URL = "http://data.mxnet.io/"


def _fetch(url: str, fname: str) -> None:
    """Copy ``url`` into ``fname`` through a temporary file in the same folder, renamed
    into place only when complete (a failed download leaves nothing behind)."""
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(fname) + ".", suffix=".part",
                               dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:
            status = getattr(resp, "status", 200)
            if status != 200:
                raise OSError(f"failed to open {url}: HTTP status {status}")
            shutil.copyfileobj(resp, out, 1 << 20)
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download a URL to a local file.

    Parameters
    ----------
    url : str
        URL to download.
    fname : str, optional
        Name of the downloaded file; the last part of the URL if None.
    dirname : str, optional
        Folder to put it in (created if needed); else the folder of ``fname``.
    overwrite : bool, optional
        Download even when the file exists (by default an existing file is kept).
    retries : int, default 5
        How many times to try again after a failure.

    Returns
    -------
    str
        The path of the downloaded file.
    """
    assert retries >= 0, "Number of retries should be at least 0"
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname != "" and not os.path.exists(dirname):
        try:
            _LOG.info("create directory %s", dirname)
            os.makedirs(dirname)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise OSError("failed to create " + dirname) from exc
    if not overwrite and os.path.exists(fname):
        _LOG.info("%s exists, skipping download", fname)
        return fname
    while True:
        try:
            _fetch(url, fname)
            break
        except OSError:
            retries -= 1
            if retries <= 0:
                raise
            print("download failed, retrying, {} attempt{} left"
                  .format(retries, "s" if retries > 1 else ""))
            time.sleep(0.1)
    _LOG.info("downloaded %s into %s successfully", url, fname)
    return fname


_MODELS = {
    "imagenet1k-inception-bn": "imagenet/inception-bn/Inception-BN",
    "imagenet1k-resnet-18": "imagenet/resnet/18-layers/resnet-18",
    "imagenet1k-resnet-34": "imagenet/resnet/34-layers/resnet-34",
    "imagenet1k-resnet-50": "imagenet/resnet/50-layers/resnet-50",
    "imagenet1k-resnet-101": "imagenet/resnet/101-layers/resnet-101",
    "imagenet1k-resnext-50": "imagenet/resnext/50-layers/resnext-50",
    "imagenet1k-resnext-101": "imagenet/resnext/101-layers/resnext-101",
    "imagenet1k-resnext-101-64x4d": "imagenet/resnext/101-layers/resnext-101-64x4d",
    "imagenet11k-resnet-152": "imagenet-11k/resnet-152/resnet-152",
    "imagenet11k-place365ch-resnet-152": "imagenet-11k-place365-ch/resnet-152",
    "imagenet11k-place365ch-resnet-50": "imagenet-11k-place365-ch/resnet-50",
}


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download a model's symbol and parameters from data.mxnet.io.

    Parameters
    ----------
    model_name : str
        One of the names MXNet's model store knows (``imagenet1k-resnet-18``, ...).
    dst_dir : str
        Destination folder.
    meta_info : dict of str to dict, optional
        ``{name: {'symbol': url, 'params': url}}`` replacing the built-in table.

    Returns
    -------
    (str, int)
        The prefix of the model files and epoch 0, or ``(None, 0)`` for an unknown name.
    """
    if meta_info is None:
        base = _DATA_URL + "models/"
        meta_info = {name: {"symbol": base + path + "-symbol.json",
                            "params": base + path + "-0000.params"}
                     for name, path in _MODELS.items()}
    meta_info = dict(meta_info)
    if model_name not in meta_info:
        return (None, 0)
    if not os.path.isdir(dst_dir):
        os.mkdir(dst_dir)
    meta = dict(meta_info[model_name])
    assert "symbol" in meta, "missing symbol url"
    model_name = os.path.join(dst_dir, model_name)
    download(meta["symbol"], model_name + "-symbol.json")
    assert "params" in meta, "mssing parameter file url"
    download(meta["params"], model_name + "-0000.params")
    return (model_name, 0)


def _read_mnist(label_path: str, image_path: str) -> tuple[np.ndarray, np.ndarray]:
    """MNIST labels (int8) and images (N, 1, 28, 28 float32 in [0, 1]) from gzipped idx files."""
    with gzip.open(label_path) as flbl:
        struct.unpack(">II", flbl.read(8))
        label = np.frombuffer(flbl.read(), dtype=np.int8)
    with gzip.open(image_path, "rb") as fimg:
        _, _, rows, cols = struct.unpack(">IIII", fimg.read(16))
        image = np.frombuffer(fimg.read(), dtype=np.uint8).reshape(len(label), rows, cols)
    return label, image.reshape(image.shape[0], 1, 28, 28).astype(np.float32) / 255


def get_mnist():
    """Download (or find in the current folder) and load the MNIST dataset.

    Returns
    -------
    dict
        ``train_data``, ``train_label``, ``test_data`` and ``test_label`` as NumPy arrays.
    """
    path = _DATA_URL + "data/mnist/"
    train_lbl, train_img = _read_mnist(download(path + "train-labels-idx1-ubyte.gz"),
                                       download(path + "train-images-idx3-ubyte.gz"))
    test_lbl, test_img = _read_mnist(download(path + "t10k-labels-idx1-ubyte.gz"),
                                     download(path + "t10k-images-idx3-ubyte.gz"))
    return {"train_data": train_img, "train_label": train_lbl,
            "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl():
    """Download MNIST as ``data/mnist.pkl.gz`` unless it is there."""
    if not os.path.isdir("data"):
        os.makedirs("data")
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _get_zipped(names: list[str], url: str, into: str) -> None:
    if not os.path.isdir("data"):
        os.makedirs("data")
    if not all(os.path.exists(os.path.join(into, n)) for n in names):
        zip_file_path = download(url, dirname="data")
        with zipfile.ZipFile(zip_file_path) as zf:
            zf.extractall("data")


def get_mnist_ubyte():
    """Download and extract the ubyte MNIST files into ``data/`` unless they are there."""
    _get_zipped(["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"],
                _DATA_URL + "mxnet/data/mnist.zip", "data")


def get_cifar10():
    """Download and extract CIFAR-10 into ``data/cifar/`` unless it is there."""
    _get_zipped(["train.rec", "test.rec", "train.lst", "test.lst"],
                _DATA_URL + "mxnet/data/cifar10.zip", "data/cifar")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation ``MNISTIter`` over the ubyte files in ``data/``.

    Returns
    -------
    (DataIter, DataIter)
    """
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = _io.MNISTIter(image="data/train-images-idx3-ubyte",
                          label="data/train-labels-idx1-ubyte", input_shape=input_shape,
                          batch_size=batch_size, shuffle=True, flat=flat,
                          num_parts=num_parts, part_index=part_index)
    val = _io.MNISTIter(image="data/t10k-images-idx3-ubyte",
                        label="data/t10k-labels-idx1-ubyte", input_shape=input_shape,
                        batch_size=batch_size, flat=flat, num_parts=num_parts,
                        part_index=part_index)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Download ``url`` into ``data_dir`` as ``data_origin_name`` and extract it there."""
    data_origin_name = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(data_origin_name):
        download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(data_origin_name) as zip_file:
            zip_file.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download a bz2 file into ``data_dir`` and decompress it to ``data_name``."""
    data_name = os.path.join(data_dir, data_name)
    data_origin_name = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(data_name):
        download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
        tmp = data_name + ".part"
        with bz2.BZ2File(data_origin_name, "rb") as bz_file, open(tmp, "wb") as fout:
            shutil.copyfileobj(bz_file, fout)
        os.replace(tmp, data_name)
        os.remove(data_origin_name)


class DummyIter(_io.DataIter):
    """An iterator that always returns the first batch of a real iterator (for speed tests).

    Parameters
    ----------
    real_iter : mx.io.DataIter
        The iterator whose first batch is returned forever.
    """

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator; never raises StopIteration."""
        return self.the_batch


def get_im2rec_path(home_env="MXNET_HOME"):
    """The path of the ``im2rec.py`` tool under ``$MXNET_HOME`` or the installed package."""
    from . import __file__ as pkg_file
    root = os.environ.get(home_env, os.path.dirname(pkg_file))
    for candidate in (os.path.join(root, "tools", "im2rec.py"),
                      os.path.join(root, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(candidate):
            return candidate
    raise IOError("Could not find path to tools/im2rec.py")

"""Vision datasets: MNIST, FashionMNIST, CIFAR10, CIFAR100, image folders and image RecordIO.

Nothing is downloaded: the readers take the standard files from ``root`` and raise an
MXNetError naming the missing files (and where to put them) when they are absent.
"""
from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings

import numpy as np

from .. import dataset
from .... import image, recordio
from .... import ndarray as nd
from .... import numpy as _mx_np
from ....base import MXNetError
from ....util import is_np_array

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


def _data_dir() -> str:
    """MXNet's data directory: $MXNET_HOME, else ~/.mxnet."""
    return os.getenv("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def _missing(name: str, root: str, files: list[str], source: str) -> MXNetError:
    """The error for dataset files absent from ``root``."""
    return MXNetError(
        "%s: dataset file(s) not found: %s. mxtorch does not download datasets; put the "
        "standard files (from %s) in %s" % (name, ", ".join(files), source, root))


def _find_file(root: str, name: str, subdirs=()) -> str | None:
    """``root/name`` (or ``root/<subdir>/name``, or the name without '.gz') if it exists."""
    candidates = [name] + ([name[:-3]] if name.endswith(".gz") else [])
    for sub in ("",) + tuple(subdirs):
        for cand in candidates:
            path = os.path.join(root, sub, cand)
            if os.path.isfile(path):
                return path
    return None


def _front_end_arrays(data: np.ndarray, label: np.ndarray):
    """The images as an array of the active front end; the labels as NumPy, or as an
    ``mx.np.ndarray`` under NumPy array semantics (MXNet's MNIST/CIFAR)."""
    if is_np_array():
        return _mx_np.array(data, dtype=data.dtype), _mx_np.array(label, dtype=label.dtype)
    return nd.array(data, dtype=data.dtype), label


def _open_maybe_gz(path: str):
    """Open a file, through gzip when it ends in '.gz'."""
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


class MNIST(dataset._DownloadedDataset):
    """MNIST handwritten digits dataset from http://yann.lecun.com/exdb/mnist

    Each sample is an image (in 3D NDArray) with shape (28, 28, 1).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/mnist
        Path to the folder holding ``train-images-idx3-ubyte.gz`` etc.
    train : bool, default True
        Whether to load the training or testing set.
    transform : function, default None
        A user defined callback that transforms each sample. For example::

            transform=lambda data, label: (data.astype(np.float32)/255, label)
    """

    _source = "http://yann.lecun.com/exdb/mnist"

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "mnist"),
                 train=True, transform=None):
        self._train = train
        self._train_data = ("train-images-idx3-ubyte.gz",)
        self._train_label = ("train-labels-idx1-ubyte.gz",)
        self._test_data = ("t10k-images-idx3-ubyte.gz",)
        self._test_label = ("t10k-labels-idx1-ubyte.gz",)
        self._namespace = "mnist"
        super().__init__(root, transform)

    def _get_data(self):
        if self._train:
            data, label = self._train_data, self._train_label
        else:
            data, label = self._test_data, self._test_label
        data_file = _find_file(self._root, data[0])
        label_file = _find_file(self._root, label[0])
        missing = [f[0] for f, p in ((data, data_file), (label, label_file)) if p is None]
        if missing:
            raise _missing(type(self).__name__, self._root, missing, self._source)
        with _open_maybe_gz(label_file) as fin:
            magic, num = struct.unpack(">II", fin.read(8))
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        if magic != 2049 or num != len(label):
            raise MXNetError("%s: %s is not an MNIST label file" % (type(self).__name__,
                                                                   label_file))
        with _open_maybe_gz(data_file) as fin:
            magic, _, rows, cols = struct.unpack(">IIII", fin.read(16))
            data = np.frombuffer(fin.read(), dtype=np.uint8)
        if magic != 2051 or data.size != len(label) * rows * cols:
            raise MXNetError("%s: %s is not an MNIST image file matching %s"
                             % (type(self).__name__, data_file, label_file))
        data = data.reshape(len(label), rows, cols, 1)
        self._data, self._label = _front_end_arrays(data, label)


class FashionMNIST(MNIST):
    """A dataset of Zalando's article images, a drop-in replacement of MNIST.

    Each sample is an image (in 3D NDArray) with shape (28, 28, 1).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/fashion-mnist
        Path to the folder holding ``train-images-idx3-ubyte.gz`` etc.
    train : bool, default True
        Whether to load the training or testing set.
    transform : function, default None
        A user defined callback that transforms each sample.
    """

    _source = "https://github.com/zalandoresearch/fashion-mnist"

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)
        self._namespace = "fashion-mnist"


class CIFAR10(dataset._DownloadedDataset):
    """CIFAR10 image classification dataset from https://www.cs.toronto.edu/~kriz/cifar.html

    Each sample is an image (in 3D NDArray) with shape (32, 32, 3).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar10
        Path to the folder holding the binary batches (``data_batch_1.bin`` ...
        ``test_batch.bin``) or the archive ``cifar-10-binary.tar.gz``.
    train : bool, default True
        Whether to load the training or testing set.
    transform : function, default None
        A user defined callback that transforms each sample.
    """

    _subdir = "cifar-10-batches-bin"

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar10"),
                 train=True, transform=None):
        self._train = train
        self._archive_file = ("cifar-10-binary.tar.gz",)
        self._train_data = [("data_batch_%d.bin" % i,) for i in range(1, 6)]
        self._test_data = [("test_batch.bin",)]
        self._namespace = "cifar10"
        super().__init__(root, transform)

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + 1)
        return data[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), \
            data[:, 0].astype(np.int32)

    def _locate(self, names):
        """Paths of the batch files, extracting the archive when only it is there."""
        paths = [_find_file(self._root, n, (self._subdir,)) for n in names]
        archive = _find_file(self._root, self._archive_file[0])
        if None in paths and archive is not None:
            with tarfile.open(archive) as tar:
                tar.extractall(self._root, filter="data")
            paths = [_find_file(self._root, n, (self._subdir,)) for n in names]
        missing = [n for n, p in zip(names, paths) if p is None]
        if missing:
            raise _missing(type(self).__name__, self._root,
                           missing + ["(or %s)" % self._archive_file[0]],
                           "https://www.cs.toronto.edu/~kriz/cifar.html, binary version")
        return paths

    def _get_data(self):
        data_files = self._train_data if self._train else self._test_data
        paths = self._locate([name for name, *_ in data_files])
        data, label = zip(*(self._read_batch(path) for path in paths))
        data = np.concatenate(data)
        label = np.concatenate(label)
        self._data, self._label = _front_end_arrays(data, label)


class CIFAR100(CIFAR10):
    """CIFAR100 image classification dataset from https://www.cs.toronto.edu/~kriz/cifar.html

    Each sample is an image (in 3D NDArray) with shape (32, 32, 3).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/cifar100
        Path to the folder holding ``train.bin``/``test.bin`` or ``cifar-100-binary.tar.gz``.
    fine_label : bool, default False
        Whether to load the fine-grained (100 classes) or coarse-grained (20 super-classes) labels.
    train : bool, default True
        Whether to load the training or testing set.
    transform : function, default None
        A user defined callback that transforms each sample.
    """

    _subdir = "cifar-100-binary"

    def __init__(self, root=os.path.join(_data_dir(), "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._train = train
        self._archive_file = ("cifar-100-binary.tar.gz",)
        self._train_data = [("train.bin",)]
        self._test_data = [("test.bin",)]
        self._fine_label = fine_label
        self._namespace = "cifar100"
        dataset._DownloadedDataset.__init__(self, root, transform)

    def _read_batch(self, filename):
        with open(filename, "rb") as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + 2)
        return data[:, 2:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), \
            data[:, 0 + self._fine_label].astype(np.int32)


class ImageRecordDataset(dataset.RecordFileDataset):
    """A dataset wrapping over a RecordIO file containing images.

    Each sample is an image and its corresponding label.

    Parameters
    ----------
    filename : str
        Path to rec file.
    flag : {0, 1}, default 1
        If 0, always convert images to greyscale. If 1, always convert images to colored (RGB).
    transform : function, default None
        A user defined callback that transforms each sample.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        record = super().__getitem__(idx)
        header, img = recordio.unpack(record)
        if self._transform is not None:
            return self._transform(image.imdecode(img, self._flag), header.label)
        return image.imdecode(img, self._flag), header.label


class ImageFolderDataset(dataset.Dataset):
    """A dataset for loading image files stored in a folder structure ``root/<class>/<file>``.

    Parameters
    ----------
    root : str
        Path to root directory.
    flag : {0, 1}, default 1
        If 0, always convert loaded images to greyscale (1 channel).
        If 1, always convert loaded images to colored (3 channels).
    transform : callable, default None
        A function that takes data and label and transforms them.

    Attributes
    ----------
    synsets : list
        List of class names. `synsets[i]` is the name for the integer label `i`
    items : list of tuples
        List of all images in (filename, label) pairs.
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn("Ignoring %s, which is not a directory." % path, stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn("Ignoring %s of type %s. Only support %s"
                                  % (filename, ext, ", ".join(self._exts)))
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)

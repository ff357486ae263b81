"""``mx.runtime``: which of MXNet's compile-time features this installation has.

MXNet reports what its native library was built with; mxtorch reports what the torch it
runs on provides (CUDA, cuDNN, NCCL, MKL, oneDNN, OpenMP, LAPACK, the CPU's vector units),
under MXNet's feature names and in MXNet's order::

    >>> features = mx.runtime.Features()
    >>> features.is_enabled('CUDA')
    False
"""
from __future__ import annotations

import collections
import ctypes
import importlib.util
import platform

import torch

__all__ = ["Feature", "Features", "feature_list"]


class Feature(ctypes.Structure):
    """Compile time feature description, member fields: ``name`` and ``enabled``."""

    _fields_ = [("_name", ctypes.c_char_p), ("_enabled", ctypes.c_bool)]

    @property
    def name(self) -> str:
        """Feature name."""
        return self._name.decode()

    @property
    def enabled(self) -> bool:
        """True if the feature is available."""
        return bool(self._enabled)

    def __repr__(self) -> str:
        return ("✔ " if self.enabled else "✖ ") + self.name


def _cpu_flags() -> set[str]:
    """The CPU's feature flags (Linux /proc/cpuinfo; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _blas() -> str:
    config = torch.__config__.show()
    for name in ("mkl", "openblas", "atlas", "accelerate"):
        if f"BLAS_INFO={name}" in config:
            return name
    return ""


def _detect() -> list[tuple[str, bool]]:
    """Every MXNet feature name (libinfo.h order) with whether it is available."""
    cuda = torch.backends.cuda.is_built()
    flags = _cpu_flags()
    x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    blas = _blas()
    dist = torch.distributed.is_available()
    return [
        ("CUDA", cuda),
        ("CUDNN", cuda and torch.backends.cudnn.is_available()),
        ("NCCL", dist and torch.distributed.is_nccl_available()),
        ("CUDA_RTC", cuda),
        ("TENSORRT", False),
        ("CPU_SSE", x86 and "sse" in flags),
        ("CPU_SSE2", x86 and "sse2" in flags),
        ("CPU_SSE3", x86 and "pni" in flags),
        ("CPU_SSE4_1", x86 and "sse4_1" in flags),
        ("CPU_SSE4_2", x86 and "sse4_2" in flags),
        ("CPU_SSE4A", x86 and "sse4a" in flags),
        ("CPU_AVX", x86 and "avx" in flags),
        ("CPU_AVX2", x86 and "avx2" in flags),
        ("OPENMP", torch.backends.openmp.is_available()),
        ("SSE", x86 and "sse" in flags),
        ("F16C", x86 and "f16c" in flags),
        ("JEMALLOC", False),
        ("BLAS_OPEN", blas == "openblas"),
        ("BLAS_ATLAS", blas == "atlas"),
        ("BLAS_MKL", blas == "mkl"),
        ("BLAS_APPLE", blas == "accelerate"),
        ("LAPACK", bool(torch._C.has_lapack)),
        ("MKLDNN", torch.backends.mkldnn.is_available()),
        # MXNet's image operators decode through OpenCV; mxtorch's through Pillow.
        ("OPENCV", importlib.util.find_spec("PIL") is not None),
        ("CAFFE", False),
        ("PROFILER", True),   # mx.profiler, on torch.profiler
        ("DIST_KVSTORE", dist),
        ("CXX14", True),
        ("INT64_TENSOR_SIZE", True),   # torch indexes tensors with 64-bit sizes
        ("SIGNAL_HANDLER", False),
        ("DEBUG", False),
        ("TVM_OP", False),
    ]


def feature_list() -> list[Feature]:
    """Every feature, available or not, as :class:`Feature` objects."""
    return [Feature(name.encode(), enabled) for name, enabled in _detect()]


class Features(collections.OrderedDict):
    """OrderedDict of name to :class:`Feature`; one instance per process."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self) -> None:  # filled once, in __new__
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether a feature is available; RuntimeError for an unknown name.

        Parameters
        ----------
        feature_name : str
            The name of a feature, for example 'CUDA'.
        """
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError("Feature '{}' is unknown, known features are: {}".format(
                feature_name, list(self.keys())))
        return self[feature_name].enabled

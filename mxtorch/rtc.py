r"""Compile and run CUDA kernels from Python (``mx.rtc``), on torch's NVRTC wrapper.

MXNet compiles the source with NVRTC and launches the kernels on its engine's stream;
mxtorch compiles each kernel with ``torch.cuda._compile_kernel`` (NVRTC, for the device's
own architecture) and launches it on torch's current stream of the launch device, so it is
ordered with the torch work on the same arrays. CUDA is required: creating a
:class:`CudaModule` without a CUDA device raises :class:`~mxtorch.base.MXNetError`.

Example::

    source = r'''
    extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
        int i = threadIdx.x + blockIdx.x * blockDim.x;
        y[i] += alpha * x[i];
    }
    '''
    module = mx.rtc.CudaModule(source)
    func = module.get_kernel("axpy", "const float *x, float *y, float alpha")
    x = mx.nd.ones((10,), ctx=mx.gpu(0))
    y = mx.nd.zeros((10,), ctx=mx.gpu(0))
    func.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
"""
from __future__ import annotations

import ctypes
import re
from typing import Any, NamedTuple

import numpy as np
import torch

from .base import MXNetError, numeric_types, string_types
from .ndarray.ndarray import NDArray

__all__ = ["CudaModule", "CudaKernel"]

# C++ type of a kernel argument -> its NumPy dtype (MXNet's list)
_DTYPE_CPP_TO_NP = {
    "float": np.float32,
    "double": np.float64,
    "__half": np.float16,
    "uint8_t": np.uint8,
    "int": np.int32,
    "int32_t": np.int32,
    "int8_t": np.int8,
    "char": np.int8,
    "int64_t": np.int64,
}
# one argument of a signature, spaces collapsed: "(const) type (*) (name)"
_ARG = re.compile(r"(?P<const>const)? ?(?P<type>\w+) ?(?P<ptr>\*)? ?(?P<name>\w+)?")


class _Arg(NamedTuple):
    """One parsed kernel argument."""

    is_ndarray: bool
    is_const: bool
    dtype: type


def _parse_signature(signature: str) -> list[_Arg]:
    """The arguments of a kernel signature such as ``"const float *x, float *y, int n"``."""
    args = []
    for arg in re.sub(r"\s+", " ", signature).split(","):
        text = " ".join(arg.split())
        match = _ARG.fullmatch(text)
        if match is None or match["type"] == "const":
            raise ValueError('Invalid function prototype "%s". Must be in the form of '
                             '"(const) type (*) (name)"' % text)
        if match["type"] not in _DTYPE_CPP_TO_NP:
            raise TypeError("Unsupported kernel argument type %s. Supported types are: %s."
                            % (text, ",".join(_DTYPE_CPP_TO_NP)))
        args.append(_Arg(bool(match["ptr"]), bool(match["const"]),
                         _DTYPE_CPP_TO_NP[match["type"]]))
    return args


def _require_cuda() -> None:
    if not torch.cuda.is_available():
        raise MXNetError("CudaModule: CUDA runtime compilation needs CUDA: this torch build "
                         "or machine has no CUDA device (torch.cuda.is_available() is False)")


class CudaModule:
    r"""Compile and run CUDA code from Python.

    Kernels declared ``extern "C"`` are found by their name; others (templates included)
    are named in ``exports`` and then fetched by that name, e.g. ``'axpy<float>'``.

    Parameters
    ----------
    source : str
        Complete source code.
    options : tuple of str
        Compiler (NVRTC) flags, e.g. ``"-I/usr/local/cuda/include"``.
    exports : tuple of str
        Export kernel names.

    Raises
    ------
    MXNetError
        Without a CUDA device, or when an exported kernel does not compile.
    """

    def __init__(self, source, options=(), exports=()):
        if isinstance(options, string_types):
            options = (options,)
        if isinstance(exports, string_types):
            exports = (exports,)
        _require_cuda()
        self.source = source
        self.options = tuple(options)
        self.exports = tuple(exports)
        self._compiled: dict[tuple[str, int], Any] = {}
        device = torch.cuda.current_device()
        for name in self.exports:  # MXNet compiles at creation: report errors now
            self._function(name, device)

    def _function(self, name: str, device: int):
        """The compiled kernel ``name`` loaded on CUDA device ``device`` (cached)."""
        key = (name, device)
        kernel = self._compiled.get(key)
        if kernel is None:
            try:
                with torch.cuda.device(device):
                    kernel = torch.cuda._compile_kernel(self.source, name,
                                                        nvcc_options=list(self.options))
            except RuntimeError as err:
                raise MXNetError("Cannot compile or find cuda kernel with name '%s': %s. "
                                 "Please either prepend kernel definition with 'extern \"C\"' "
                                 "or add its name to exports when creating CudaModule."
                                 % (name, err)) from None
            self._compiled[key] = kernel
        return kernel

    def get_kernel(self, name, signature):
        r"""Get CUDA kernel from compiled module.

        Parameters
        ----------
        name : str
            String name of the kernel.
        signature : str
            Function signature for the kernel. For a kernel declared as
            ``extern "C" __global__ void axpy(const float *x, double *y, int alpha)`` it is
            ``"const float *x, double *y, int alpha"`` or ``"const float *, double *, int"``:
            ``*`` marks an array argument and ``const`` a constant (input) array.

        Returns
        -------
        CudaKernel
            CUDA kernels that can be launched on GPUs.

        Raises
        ------
        ValueError
            When an argument is not of the form ``(const) type (*) (name)``.
        TypeError
            When an argument's type is not one of float, double, __half, uint8_t, int,
            int32_t, int8_t, char, int64_t.
        """
        args = _parse_signature(signature)
        self._function(name, torch.cuda.current_device())
        return CudaKernel(self, name, [a.is_ndarray for a in args],
                          [a.dtype for a in args], [a.is_const for a in args])


class CudaKernel:
    """A CUDA kernel of a :class:`CudaModule`; made by :meth:`CudaModule.get_kernel`, not
    intended to be created by users."""

    def __init__(self, module, name, is_ndarray, dtypes, is_const=None):
        self._module = module
        self._name = name
        self._is_ndarray = list(is_ndarray)
        self._dtypes = list(dtypes)
        self._is_const = list(is_const) if is_const is not None else [False] * len(dtypes)

    def _c_args(self, args, device: int) -> list:
        """The kernel arguments as ctypes objects (pointers for arrays, typed numbers)."""
        values = []
        for i, (arg, is_nd, dtype) in enumerate(zip(args, self._is_ndarray, self._dtypes)):
            if is_nd:
                if not isinstance(arg, NDArray):
                    raise AssertionError("The %d-th argument is expected to be a NDArray but "
                                         "got %s" % (i, type(arg)))
                t = arg.handle
                if np.dtype(arg.dtype) != np.dtype(dtype):
                    raise MXNetError("CudaKernel(%s): the %d-th argument is expected to be "
                                     "an NDArray of %s type, but got %s instead."
                                     % (self._name, i, np.dtype(dtype).name,
                                        np.dtype(arg.dtype).name))
                if t.device != torch.device("cuda", device) or not t.is_contiguous():
                    raise MXNetError("CudaKernel(%s): the %d-th argument must be a contiguous "
                                     "array on gpu(%d), got one on %s"
                                     % (self._name, i, device, arg.context))
                values.append(ctypes.c_void_p(t.data_ptr()))
            else:
                if not isinstance(arg, numeric_types):
                    raise AssertionError("The %d-th argument is expected to be a number, but "
                                         "got %s" % (i, type(arg)))
                values.append(np.array(arg, dtype=dtype))
        return values

    def launch(self, args, ctx, grid_dims, block_dims, shared_mem=0):
        """Launch cuda kernel.

        Parameters
        ----------
        args : tuple of NDArray or numbers
            List of arguments for kernel. NDArrays are expected for pointer
            types (e.g. `float*`, `double*`) while numbers are expected for
            non-pointer types (e.g. `int`, `float`).
        ctx : Context
            The context to launch kernel on. Must be GPU context.
        grid_dims : tuple of 3 integers
            Grid dimensions for CUDA kernel.
        block_dims : tuple of 3 integers
            Block dimensions for CUDA kernel.
        shared_mem : integer, optional
            Size of dynamically allocated shared memory. Defaults to 0.
        """
        if ctx.device_type != "gpu":
            raise AssertionError("Cuda kernel can only be launched on GPU")
        if len(grid_dims) != 3:
            raise AssertionError("grid_dims must be a tuple of 3 integers")
        if len(block_dims) != 3:
            raise AssertionError("block_dims must be a tuple of 3 integers")
        if len(args) != len(self._dtypes):
            raise AssertionError("CudaKernel(%s) expects %d arguments but got %d"
                                 % (self._name, len(self._dtypes), len(args)))
        values = self._c_args(args, ctx.device_id)
        kernel = self._module._function(self._name, ctx.device_id)
        if shared_mem >= 48 * 1024:
            kernel.set_shared_memory_config(shared_mem)
        pointers = (ctypes.c_void_p * len(values))(*[
            ctypes.addressof(v) if isinstance(v, ctypes.c_void_p) else v.ctypes.data
            for v in values])
        from torch.cuda._utils import _check_cuda, _get_gpu_runtime_library
        stream = torch.cuda.current_stream(ctx.device_id)
        _check_cuda(_get_gpu_runtime_library().cuLaunchKernel(
            kernel.func, *[int(d) for d in grid_dims], *[int(d) for d in block_dims],
            int(shared_mem), stream._as_parameter_, pointers, None))

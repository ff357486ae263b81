"""mx.rtc: CUDA kernels compiled at run time (torch's NVRTC); argument checking runs
everywhere, compiling and launching only with a CUDA device."""
import numpy as np
import pytest
import torch

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.rtc import CudaKernel, CudaModule, _parse_signature

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

AXPY = r'''
extern "C" __global__ void axpy(const float *x, float *y, float alpha) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    y[i] += alpha * x[i];
}
template<typename DType>
__global__ void scale(DType *y, DType alpha, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) y[i] *= alpha;
}
'''


def test_signature_parsing():
    args = _parse_signature("const float *x, double *y, int alpha")
    assert [(a.is_ndarray, a.is_const, a.dtype) for a in args] == [
        (True, True, np.float32), (True, False, np.float64), (False, False, np.int32)]
    assert _parse_signature("const float *, double *, int") == args
    assert [a.dtype for a in _parse_signature("__half *h, uint8_t u, int64_t *l, char c")] \
        == [np.float16, np.uint8, np.int64, np.int8]
    with pytest.raises(TypeError, match="Unsupported kernel argument type float16 \\*y"):
        _parse_signature("const float *x, float16 *y")
    for bad in ("float *x y z", "const *x", ""):
        with pytest.raises(ValueError, match="Invalid function prototype"):
            _parse_signature(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_module_without_cuda_raises():
    with pytest.raises(MXNetError, match="CUDA runtime compilation needs CUDA"):
        CudaModule(AXPY)


@pytest.mark.parametrize("args,ctx,grid,block,err,match", [
    ([1, 2, 3.0], mx.cpu(), (1, 1, 1), (1, 1, 1), AssertionError, "only be launched on GPU"),
    ([1, 2, 3.0], mx.gpu(0), (1, 1), (1, 1, 1), AssertionError, "grid_dims must be a tuple"),
    ([1, 2, 3.0], mx.gpu(0), (1, 1, 1), (1,), AssertionError, "block_dims must be a tuple"),
    ([1, 2], mx.gpu(0), (1, 1, 1), (1, 1, 1), AssertionError, "expects 3 arguments but got 2"),
    ([1, 2, 3.0], mx.gpu(0), (1, 1, 1), (1, 1, 1), AssertionError,
     "0-th argument is expected to be a NDArray"),
    ([mx.nd.ones(2, dtype="float64"), mx.nd.ones(2), 1.0], mx.gpu(0), (1, 1, 1), (1, 1, 1),
     MXNetError, "0-th argument is expected to be an NDArray of float32 type, but got float64"),
    ([mx.nd.ones(2), mx.nd.ones(2), 1.0], mx.gpu(0), (1, 1, 1), (1, 1, 1), MXNetError,
     r"0-th argument must be a contiguous array on gpu\(0\), got one on cpu\(0\)"),
])
def test_launch_argument_errors(args, ctx, grid, block, err, match):
    kernel = CudaKernel(None, "axpy", [True, True, False], [np.float32] * 3, [True, False, False])
    with pytest.raises(err, match=match):
        kernel.launch(args, ctx, grid, block)


@needs_cuda
def test_axpy_and_template_kernels_on_gpu():
    module = CudaModule(AXPY, exports=["scale<float>"])
    axpy = module.get_kernel("axpy", "const float *x, float *y, float alpha")
    x = mx.nd.arange(10, ctx=mx.gpu(0))
    y = mx.nd.ones((10,), ctx=mx.gpu(0))
    axpy.launch([x, y, 3.0], mx.gpu(0), (1, 1, 1), (10, 1, 1))
    np.testing.assert_allclose(y.asnumpy(), 1 + 3 * np.arange(10))
    scale = module.get_kernel("scale<float>", "float *y, float alpha, int n")
    scale.launch([y, 0.5, 4], mx.gpu(0), (1, 1, 1), (10, 1, 1))
    np.testing.assert_allclose(y.asnumpy()[:5], [0.5, 2, 3.5, 5, 13])
    with pytest.raises(MXNetError, match="Cannot compile or find cuda kernel with name "
                                         "'no_such_kernel'"):
        module.get_kernel("no_such_kernel", "float *y")

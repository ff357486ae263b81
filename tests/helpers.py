"""One helper to check an operator against NumPy: forward, numeric gradient, dtype, shape."""
from __future__ import annotations

import json
import os
from functools import lru_cache

import numpy as np
import torch

import mxtorch as mx
from mxtorch.ops import registry

# Files real MXNet 1.9.1 wrote (a copy of shared/fixtures/mxnet-1.9.1 ships with the tests,
# so a clone anywhere runs them); MXTORCH_FIXTURES points elsewhere.
FIXTURES = os.environ.get(
    "MXTORCH_FIXTURES", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                                     "mxnet-1.9.1"))


def fixture_path(*parts: str) -> str:
    return os.path.join(FIXTURES, *parts)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def numeric_grad(f, inputs: list[np.ndarray], head: list[np.ndarray], eps: float = 1e-6):
    """Central differences of sum(f(inputs) * head) w.r.t. each float input (float64)."""
    grads = []
    for x in inputs:
        if not np.issubdtype(x.dtype, np.floating):
            grads.append(None)
            continue
        g = np.zeros_like(x, dtype=np.float64)
        flat = x.reshape(-1)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + eps
            fp = sum(float((o * h).sum()) for o, h in zip(f(inputs), head))
            flat[j] = old - eps
            fm = sum(float((o * h).sum()) for o, h in zip(f(inputs), head))
            flat[j] = old
            g.reshape(-1)[j] = (fp - fm) / (2 * eps)
        grads.append(g)
    return grads


def check_op(op: str, inputs, attrs=None, expected=None, *, grad: bool | list = True,
             rtol: float = 1e-5, atol: float = 1e-6, grad_rtol: float = 1e-4,
             grad_atol: float = 1e-5, train: bool = False, dtype_out=None, seed: int = 0):
    """Check ``mx.nd.<op>`` forward against ``expected`` (arrays or a NumPy function).

    - forward in float32 against ``expected`` (a callable gets float64 inputs);
    - gradients (float64 autograd) against central differences, for float inputs;
    - output dtypes, and ``infer_shape`` against the real output shapes.
    """
    attrs = attrs or {}
    inputs = [np.asarray(x) for x in inputs]
    fn = getattr(mx.nd, op) if hasattr(mx.nd, op) else getattr(mx.nd._internal, op)
    nd_in = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    ctx = mx.autograd.train_mode() if train else mx.autograd.predict_mode()
    with ctx:
        outs = _as_list(fn(*nd_in, **attrs))
    if expected is not None:
        exp = expected(*[x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
                         for x in inputs]) if callable(expected) else expected
        for o, e in zip(outs, _as_list(exp)):
            e = np.asarray(e)
            assert o.shape == tuple(e.shape), f"{op}: shape {o.shape} != {e.shape}"
            np.testing.assert_allclose(o.asnumpy().astype(np.float64), e.astype(np.float64),
                                       rtol=rtol, atol=atol, err_msg=f"{op} forward")
    if dtype_out is not None:
        for o in outs:
            assert np.dtype(o.dtype) == np.dtype(dtype_out), f"{op}: dtype {o.dtype}"
    opdef = registry.get(op)
    parsed = opdef.parse_attrs(attrs)
    _, out_shapes = opdef.infer_shape(parsed, [x.shape for x in inputs])
    for o, s in zip(outs, out_shapes):
        assert s is None or tuple(s) == o.shape, f"{op}: infer_shape {s} != {o.shape}"
    if grad:
        _check_grad(op, opdef, parsed, inputs, grad, grad_rtol, grad_atol, train)
    return outs


def _check_grad(op, opdef, parsed, inputs, which, rtol, atol, train):
    x64 = [np.ascontiguousarray(x, dtype=np.float64) if np.issubdtype(x.dtype, np.floating)
           else x.copy() for x in inputs]
    rng = np.random.RandomState(1)

    def run(arrs, requires=False):
        ts = [torch.tensor(a, requires_grad=requires and np.issubdtype(a.dtype, np.floating))
              for a in arrs]
        torch.manual_seed(0)
        out = opdef.run(parsed, ts, is_train=train, device=torch.device("cpu"))
        return ts, _as_list(out)

    _, outs = run(x64)
    head = [rng.uniform(-1, 1, size=o.shape) for o in outs]
    ts, outs = run(x64, requires=True)
    diff = [t for t in ts if t.requires_grad]
    loss = sum((o * torch.tensor(h)).sum() for o, h in zip(outs, head)
               if o.is_floating_point())
    got = torch.autograd.grad(loss, diff, allow_unused=True)
    num = numeric_grad(lambda arrs: [o.detach().numpy() for o in run(arrs)[1]], x64, head)
    k = 0
    for i, t in enumerate(ts):
        if not t.requires_grad:
            continue
        g = got[k]
        k += 1
        if isinstance(which, list) and i not in which:
            continue
        g = np.zeros(t.shape) if g is None else g.numpy()
        np.testing.assert_allclose(g, num[i], rtol=rtol, atol=atol,
                                   err_msg=f"{op}: gradient of input {i}")


@lru_cache(maxsize=1)
def op_cases():
    with open(fixture_path("ops", "cases.json")) as f:
        cases = json.load(f)["cases"]
    data = dict(np.load(fixture_path("ops", "cases.npz")))
    return cases, data


DET_LABELS = ([2, 5, 0, .1, .2, .5, .6],
              [2, 5, 1, .0, .0, .5, .5, 2, .5, .5, 1., 1.],
              [2, 5, 3, .2, .2, .4, .9, 1, .1, .1, .3, .3, 0, .6, .6, .9, .8])


def det_images():
    """The three HWC uint8 images (6x8, 8x8, 10x8) of :func:`make_det_dataset`."""
    rng = np.random.RandomState(0)
    return [(rng.rand(6 + 2 * i, 8, 3) * 255).astype(np.uint8) for i in range(3)]


def make_det_dataset(folder) -> dict:
    """A detection data set of DET_LABELS over det_images() (PNG, needs Pillow or OpenCV)
    in ``folder``: det.rec/det.idx, det.lst and img<i>.png. Returns their paths."""
    from mxtorch.format import image_codec as _codec
    folder = str(folder)
    paths = {k: os.path.join(folder, "det." + k) for k in ("rec", "idx", "lst")}
    rec = mx.recordio.MXIndexedRecordIO(paths["idx"], paths["rec"], "w")
    with open(paths["lst"], "w") as lst:
        for i, (label, img) in enumerate(zip(DET_LABELS, det_images())):
            png = _codec.encode_bgr(img[:, :, ::-1], quality=3, img_fmt=".png")
            with open(os.path.join(folder, "img%d.png" % i), "wb") as f:
                f.write(png)
            header = mx.recordio.IRHeader(0, np.array(label, np.float32), i, 0)
            rec.write_idx(i, mx.recordio.pack(header, png))
            lst.write("%d\t%s\timg%d.png\n" % (i, "\t".join(str(v) for v in label), i))
    rec.close()
    return paths

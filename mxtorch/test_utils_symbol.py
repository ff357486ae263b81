"""Symbol helpers of ``mx.test_utils``: check_symbolic_forward/backward,
check_numeric_gradient, check_consistency, simple_forward (re-exported there)."""
from __future__ import annotations

import numbers

import numpy as np

from .ndarray.ndarray import NDArray, array

__all__ = ["simple_forward", "check_symbolic_forward", "check_symbolic_backward",
           "check_numeric_gradient", "check_consistency", "numeric_grad"]


def _ctx(ctx):
    from .test_utils import default_context
    return ctx or default_context()


def _parse_location(sym, location, ctx, dtype=np.float32) -> dict:
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) - set(sym.list_inputs()):
            raise ValueError(f"Symbol arguments and keys of the given location do not "
                             f"match. symbol args:{names}, location.keys():{list(location)}")
        items = location
    else:
        items = dict(zip(names, location))
    return {k: v.as_in_context(ctx) if isinstance(v, NDArray)
            else array(np.asarray(v), ctx=ctx, dtype=np.asarray(v).dtype if dtype is None
                       else dtype) for k, v in items.items()}


def _parse_aux(sym, aux_states, ctx, dtype=np.float32) -> dict | None:
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    items = aux_states if isinstance(aux_states, dict) else dict(zip(names, aux_states))
    return {k: v if isinstance(v, NDArray) else array(v, ctx=ctx, dtype=dtype)
            for k, v in items.items()}


def _bind(sym, ctx, location, aux, grad_req="null"):
    from .ndarray.utils import zeros
    args = [location[n] for n in sym.list_arguments()]
    aux_names = sym.list_auxiliary_states()
    if aux is None and aux_names:
        _, _, aux_shapes = sym.infer_shape(**{k: v.shape for k, v in location.items()})
        aux = {n: zeros(s, ctx=ctx) for n, s in zip(aux_names, aux_shapes)}
    aux_list = [aux[n] for n in aux_names] if aux_names else None
    grads = None
    if grad_req != "null":
        reqs = grad_req if isinstance(grad_req, dict) else {n: grad_req for n in location}
        grads = {n: zeros(a.shape, ctx=ctx, dtype=a.dtype) for n, a in location.items()
                 if reqs.get(n, "null") != "null"}
        grad_req = reqs
    return sym.bind(ctx, args, args_grad=grads, grad_req=grad_req, aux_states=aux_list)


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Forward ``sym`` on NumPy inputs; return NumPy output(s)."""
    ctx = _ctx(ctx)
    location = {k: array(v, ctx=ctx) for k, v in inputs.items()}
    exe = _bind(sym, ctx, location, None)
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outs[0] if len(outs) == 1 else outs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Compare the forward outputs of ``sym`` at ``location`` with ``expected``."""
    from .test_utils import assert_almost_equal
    ctx = _ctx(ctx)
    location = _parse_location(sym, location, ctx, dtype)
    exe = _bind(sym, ctx, location, _parse_aux(sym, aux_states, ctx, dtype))
    outputs = exe.forward(is_train=False)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    for name, exp, out in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(out, exp, rtol, atol, ("EXPECTED_%s" % name, "FORWARD_%s" % name),
                            equal_nan=equal_nan)
    return [o.asnumpy() for o in outputs]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Compare the gradients of ``sym`` at ``location`` for ``out_grads`` with ``expected``."""
    from .test_utils import assert_almost_equal
    ctx = _ctx(ctx)
    location = _parse_location(sym, location, ctx, dtype)
    names = sym.list_arguments()
    if not isinstance(expected, dict):
        expected = dict(zip(names, expected))
    reqs = grad_req if isinstance(grad_req, dict) else \
        {n: (grad_req if n in expected else "null") for n in names}
    exe = _bind(sym, ctx, location, _parse_aux(sym, aux_states, ctx, dtype), reqs)
    before = {n: g.asnumpy().copy() for n, g in exe.grad_dict.items() if g is not None}
    exe.forward(is_train=True)
    if isinstance(out_grads, (list, tuple)):
        out_grads = [array(g, ctx=ctx) if not isinstance(g, NDArray) else g
                     for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: array(v, ctx=ctx) for k, v in out_grads.items()}
    elif out_grads is not None and not isinstance(out_grads, NDArray):
        out_grads = [array(out_grads, ctx=ctx)]
    exe.backward(out_grads)
    grads = {n: g.asnumpy() for n, g in exe.grad_dict.items() if g is not None}
    for name, exp in expected.items():
        if reqs.get(name) == "null":
            continue
        got = grads[name] - before[name] if reqs.get(name) == "add" else grads[name]
        assert_almost_equal(exp, got, rtol, atol, ("EXPECTED_%s" % name, "BACKWARD_%s" % name),
                            equal_nan=equal_nan)
    return grads


def numeric_grad(executor, location: dict, aux_states=None, eps=1e-4,
                 use_forward_train=True, dtype=np.float32) -> dict:
    """Central finite differences of sum(outputs) w.r.t. every array in ``location``."""
    grads = {}
    for name, value in location.items():
        base = value.astype(np.float64).copy()
        g = np.zeros_like(base)
        flat = base.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            vals = []
            for delta in (eps / 2, -eps / 2):
                flat[i] = old + delta
                executor.arg_dict[name][:] = base.astype(dtype)
                outs = executor.forward(is_train=use_forward_train)
                vals.append(sum(float(o.asnumpy().astype(np.float64).sum()) for o in outs))
            flat[i] = old
            g.reshape(-1)[i] = (vals[0] - vals[1]) / eps
        executor.arg_dict[name][:] = value
        grads[name] = g
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """Compare the symbolic gradient of ``sym`` with finite differences (float32 default)."""
    from .symbol import Group, MakeLoss, var
    from .test_utils import assert_almost_equal
    ctx = _ctx(ctx)
    eps = numeric_eps or (1e-3 if np.dtype(dtype) == np.float32 else 1e-6)
    rtol = rtol or 1e-2
    atol = atol or 1e-3
    location = _parse_location(sym, location, ctx, dtype)
    np_loc = {k: v.asnumpy() for k, v in location.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
    rng = np.random.RandomState(1234)
    shapes = sym.infer_shape(**{k: v.shape for k, v in location.items()})[1]
    projs = [var(f"__random_proj{i}") for i in range(len(shapes))]
    proj_vals = {f"__random_proj{i}": array(rng.uniform(size=s), ctx=ctx, dtype=dtype)
                 for i, s in enumerate(shapes)}
    heads = [sym[i] * projs[i] for i in range(len(shapes))] if len(shapes) > 1 else \
        [sym * projs[0]]
    out = MakeLoss(Group(heads) if len(heads) > 1 else heads[0])
    full = dict(location, **proj_vals)
    reqs = {n: ("write" if n in grad_nodes else "null") for n in out.list_arguments()}
    aux = _parse_aux(sym, aux_states, ctx, dtype)
    exe = _bind(out, ctx, full, aux, reqs)
    exe.forward(is_train=use_forward_train)
    exe.backward()
    sym_grads = {n: exe.grad_dict[n].asnumpy() for n in grad_nodes}
    num_exe = _bind(out, ctx, {k: v.copy() for k, v in full.items()}, aux)
    num = numeric_grad(num_exe, {n: np_loc[n] for n in grad_nodes}, eps=eps,
                       use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        assert_almost_equal(num[name], sym_grads[name], rtol, atol,
                            ("NUMERICAL_%s" % name, "BACKWARD_%s" % name))


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, tol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Run ``sym`` on every ``{'ctx': ..., <shapes>, 'type_dict': ...}`` and compare the
    outputs and gradients with the highest-precision run."""
    from .test_utils import assert_almost_equal
    if isinstance(sym, (list, tuple)):
        syms = list(sym)
    else:
        syms = [sym] * len(ctx_list)
    tol = tol or {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
                  np.dtype(np.float64): 1e-5, np.dtype(np.uint8): 0, np.dtype(np.int32): 0,
                  np.dtype(np.int64): 0}
    if isinstance(tol, numbers.Number):
        tol = {k: tol for k in (np.dtype(np.float16), np.dtype(np.float32),
                                np.dtype(np.float64))}
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx = spec.pop("ctx")
        type_dict = spec.pop("type_dict", {})
        exes.append(s.simple_bind(ctx, grad_req=grad_req, type_dict=type_dict, **spec))
    rng = np.random.RandomState(0)
    arg_params = dict(arg_params or {})
    for n, arr in exes[0].arg_dict.items():
        if n not in arg_params:
            arg_params[n] = (rng.uniform(-scale, scale, arr.shape) if use_uniform else
                             rng.normal(size=arr.shape) * scale).astype(rand_type)
    aux_params = dict(aux_params or {})
    for n, arr in exes[0].aux_dict.items():
        aux_params.setdefault(n, np.zeros(arr.shape, dtype=rand_type))
    dtypes = [np.dtype(e.outputs[0].dtype) if e.outputs else np.dtype(
        e.arg_arrays[0].dtype) for e in exes]
    for e in exes:
        for n, v in arg_params.items():
            e.arg_dict[n][:] = v.astype(np.dtype(e.arg_dict[n].dtype))
        for n, v in aux_params.items():
            e.aux_dict[n][:] = v.astype(np.dtype(e.aux_dict[n].dtype))
        e.forward(is_train=grad_req != "null")
        if grad_req != "null":
            e.backward([o.copy() for o in e.outputs])
    dtypes = [np.dtype(e.outputs[0].dtype) for e in exes]
    gt_idx = max(range(len(exes)), key=lambda i: dtypes[i].itemsize)
    gt = exes[gt_idx]
    for i, e in enumerate(exes):
        if i == gt_idx:
            continue
        t = tol.get(dtypes[i], 1e-3)
        try:
            for a, b in zip(e.outputs, gt.outputs):
                assert_almost_equal(a.asnumpy(), b.asnumpy().astype(a.dtype), rtol=t, atol=t,
                                    equal_nan=equal_nan)
            if grad_req != "null":
                for n, g in e.grad_dict.items():
                    if g is None:
                        continue
                    assert_almost_equal(g.asnumpy(), gt.grad_dict[n].asnumpy().astype(g.dtype),
                                        rtol=t, atol=t, names=(f"grad {n}", "ground truth"),
                                        equal_nan=equal_nan)
        except AssertionError:
            if raise_on_err:
                raise
    return [e.outputs for e in exes]


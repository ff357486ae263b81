"""Symbol helpers of ``mx.test_utils``: check_symbolic_forward/backward,
check_numeric_gradient, check_consistency, simple_forward (re-exported there)."""
from __future__ import annotations

import json
import time

import numpy as np

from .ndarray.ndarray import NDArray, array

__all__ = ["simple_forward", "check_symbolic_forward", "check_symbolic_backward",
           "check_numeric_gradient", "check_consistency", "numeric_grad", "check_speed",
           "compare_optimizer", "same_symbol_structure", "check_gluon_hybridize_consistency"]


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
    # a dict gives each node its grad_req: 'write', 'add' (onto a random start) or 'null'
    node_reqs = dict(grad_nodes) if isinstance(grad_nodes, dict) else \
        {n: "write" for n in grad_nodes}
    grad_nodes = [n for n, req in node_reqs.items() if req != "null"]
    rng = np.random.RandomState(1234)
    shapes = sym.infer_shape(**{k: v.shape for k, v in location.items()})[1]
    projs = [var(f"__random_proj{i}") for i in range(len(shapes))]
    proj_vals = {f"__random_proj{i}": array(rng.uniform(size=s), ctx=ctx, dtype=dtype)
                 for i, s in enumerate(shapes)}
    heads = [sym[i] * projs[i] for i in range(len(shapes))] if len(shapes) > 1 else \
        [sym * projs[0]]
    out = MakeLoss(Group(heads) if len(heads) > 1 else heads[0])
    full = dict(location, **proj_vals)
    reqs = {n: node_reqs.get(n, "null") for n in out.list_arguments()}
    aux = _parse_aux(sym, aux_states, ctx, dtype)
    exe = _bind(out, ctx, full, aux, reqs)
    start = {n: rng.normal(0, 0.01, size=location[n].shape) for n in grad_nodes
             if reqs[n] == "add"}
    for n, g in start.items():
        exe.grad_dict[n][:] = g
    exe.forward(is_train=use_forward_train)
    exe.backward()
    sym_grads = {n: exe.grad_dict[n].asnumpy() - start.get(n, 0) for n in grad_nodes}
    num_exe = _bind(out, ctx, {k: v.copy() for k, v in full.items()}, aux)
    num = numeric_grad(num_exe, {n: np_loc[n] for n in grad_nodes}, eps=eps,
                       use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        assert_almost_equal(num[name], sym_grads[name], rtol, atol,
                            ("NUMERICAL_%s" % name, "BACKWARD_%s" % name))


def _smaller_dtype(dt1, dt2):
    """The less precise of two dtypes (``dt1`` when ``dt2`` is None)."""
    return dt1 if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize else dt2


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Check that a symbol gives the same outputs (and gradients) on every context/dtype.

    Parameters
    ----------
    sym : Symbol or list of Symbols
        The symbol(s) to run, one per entry of ``ctx_list``.
    ctx_list : list of dict
        ``{'ctx': Context, <input name>: shape, ..., 'type_dict': {name: dtype}}`` each,
        the keywords of ``simple_bind``.
    scale : float, optional
        Standard deviation (or, with ``use_uniform``, range) of the random inputs.
    grad_req : str or list of str or dict of str to str
    arg_params, aux_params : dict of name -> data, optional
        Inputs and auxiliary states to use instead of random ones.
    rtol, atol : float or dict of dtype -> float, optional
        Tolerances; by default those of the less precise dtype compared.
    raise_on_err : bool, optional
        Raise on a mismatch (else print it).
    ground_truth : dict of name -> data, optional
        Expected outputs and gradients; by default those of the most precise run.
    equal_nan : bool, optional
    use_uniform : bool, optional
        Uniform instead of normal random inputs.
    rand_type : np.dtype
        The dtype the random inputs are generated in.

    Returns
    -------
    dict
        The ground truth (outputs, and gradients unless ``grad_req`` is 'null').
    """
    from .symbol.symbol import Symbol
    from .test_utils import assert_almost_equal, get_tols
    assert len(ctx_list) > 1
    syms = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    assert len(syms) == len(ctx_list)
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exe_list = []
    for s, spec in zip(syms, ctx_list):
        assert s.list_arguments() == arg_names
        assert s.list_outputs() == output_names
        exe_list.append(s.simple_bind(grad_req=grad_req, **spec))
    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    for n, arr in sorted(exe_list[0].arg_dict.items()):  # a fixed order: reproducible
        if n not in arg_params:
            if use_uniform:
                arg_params[n] = np.random.uniform(low=-0.92 * scale, high=0.92 * scale,
                                                  size=arr.shape).astype(rand_type)
            else:
                arg_params[n] = np.random.normal(size=arr.shape,
                                                 scale=scale).astype(rand_type)
    for n in exe_list[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exe_list:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exe_list]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    gt = ground_truth
    if gt is None:
        gt = exe_list[gt_idx].output_dict.copy()
        if grad_req != "null":
            gt.update(exe_list[gt_idx].grad_dict)

    def compare(what, i, name, arr, gtarr, rt, at):
        try:
            assert_almost_equal(arr, gtarr, rtol=rt, atol=at, equal_nan=equal_nan)
        except AssertionError as err:
            print(f"{what} Err: ctx {i} vs ctx {gt_idx} at {name}")
            if raise_on_err:
                raise
            print(str(err))

    for exe in exe_list:
        exe.forward(is_train=False)
    for i, exe in enumerate(exe_list):
        if i != gt_idx:
            for name, arr in zip(output_names, exe.outputs):
                compare("Predict", i, name, arr, gt[name], rtol, atol)
    if grad_req == "null":
        return gt
    for exe in exe_list:
        exe.forward(is_train=True)
    # The first executor's outputs, cast to the least precise dtype, are every
    # executor's head gradients.
    least = [out.dtype for out in exe_list[0].outputs]
    for exe in exe_list:
        least = [_smaller_dtype(o.dtype, dt) for o, dt in zip(exe.outputs, least)]
    golden = [o.astype(dt).asnumpy() for o, dt in zip(exe_list[0].outputs, least)]
    for exe in exe_list:
        exe.backward([array(g, ctx=o.context, dtype=o.dtype)
                      for g, o in zip(golden, exe.outputs)])
    for i, exe in enumerate(exe_list):
        if i == gt_idx:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            gtarr = gt.get(name)
            if gtarr is None:
                assert arr is None
                continue
            rt, at = rtol, atol
            # float16 data: a float32 gradient (BatchNorm's gamma) gets float16 tolerances
            small_arr = _smaller_dtype(arr.dtype, dtypes[i])
            small_gt = _smaller_dtype(gtarr.dtype, dtypes[gt_idx])
            if small_arr != arr.dtype or small_gt != gtarr.dtype:
                rt, at = get_tols(arr.astype(small_arr), gtarr.astype(small_gt), rtol, atol)
            compare("Train", i, name, arr, gtarr, rt, at)
    return gt


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per forward+backward (``typ='whole'``) or forward (``'forward'``) of a symbol.

    Parameters
    ----------
    sym : Symbol
    location : dict of str to np.ndarray, optional
        Input values; random normal ones of the bound shapes when None.
    ctx : Context, optional
    N : int, optional
        Repeat times.
    grad_req : None or str or list of str or dict of str to str, optional
    typ : {'whole', 'forward'}
    """
    from .ndarray.ndarray import waitall
    ctx = _ctx(ctx)
    grad_req = "write" if grad_req is None else grad_req
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0)
                    for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), 'Expect dict, get "location"=%s' % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx,
                              **{k: v.shape for k, v in location.items()})
    for name, iarr in location.items():
        exe.arg_dict[name][:] = iarr.astype(exe.arg_dict[name].dtype)
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)
    step()   # warm up
    waitall()
    tic = time.time()
    for _ in range(N):
        step()
    waitall()
    return (time.time() - tic) / N


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Check that two optimizers make the same update (and states) from the same weights.

    ``shape`` may be a list of shapes: then ``opt2`` updates all ``ntensors`` tensors in
    one multi-tensor call and ``opt1`` one tensor at a time.
    """
    from copy import deepcopy

    from . import random as _random
    from .test_utils import assert_almost_equal, compare_ndarray_tuple, default_context, \
        rand_ndarray
    ctx = default_context()

    def make(stype, dense_density):
        if stype == "default":
            w2 = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
            return w2.copyto(ctx), w2
        if stype in ("row_sparse", "csr"):
            w2 = rand_ndarray(shape, stype, density=dense_density, dtype=dtype)
            return w2.copyto(ctx).tostype("default"), w2
        raise Exception("type not supported yet")

    if not isinstance(shape, list):
        assert ntensors == 1
        w1, w2 = make(w_stype, 1)
        g1, g2 = make(g_stype, None)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = deepcopy(w1), deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have the same operator at every node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a HybridBlock gives the same outputs (and input gradients) before and
    after ``hybridize()``, and, with ``numpy_func``, the NumPy result.

    Parameters
    ----------
    net_builder : function
        ``net_builder(prefix=...)`` builds the block (with no random operators).
    data_l : list of mx.np.ndarray
        The inputs.
    numpy_func : function, optional
        The ground truth on NumPy arrays.
    test_grad : bool, optional
        Also compare the gradients of the inputs.
    rtol, atol : float, optional
    """
    from . import autograd
    from .initializer import Initializer
    from .test_utils import assert_almost_equal
    from .util import np_array, np_shape

    class _NumpyParamDictInit(Initializer):
        """Initializes parameters from a dict of NumPy arrays."""

        def __init__(self, np_params):
            super().__init__()
            self._np_params = np_params

        def _init_weight(self, name, arr):
            arr[()] = self._np_params[name]

    saved_out_np = None
    saved_grads = None
    params_init = None
    with np_shape(True), np_array(True):
        for hybridize in (False, True):
            for use_autograd in ([False, True] if test_grad else [False]):
                net = net_builder(prefix="net_")
                net.initialize(params_init) if params_init is not None else net.initialize()
                if hybridize:
                    net.hybridize()
                in_data_l = [ele.copy() for ele in data_l]
                if use_autograd:
                    for ele in in_data_l:
                        ele.attach_grad()
                    with autograd.record():
                        out = net(*in_data_l)
                    out.backward(out)
                else:
                    out = net(*in_data_l)
                if params_init is None:
                    params_init = _NumpyParamDictInit(
                        {k: v.data().asnumpy() for k, v in net.collect_params().items()})
                if saved_out_np is None:
                    saved_out_np = out.asnumpy()
                else:
                    assert_almost_equal(out.asnumpy(), saved_out_np, rtol=rtol, atol=atol)
                if use_autograd:
                    grads = [ele.grad.asnumpy() for ele in in_data_l]
                    if saved_grads is None:
                        saved_grads = grads
                    else:
                        for got, saved in zip(grads, saved_grads):
                            assert_almost_equal(got, saved, rtol=rtol, atol=atol)
    if numpy_func is not None:
        numpy_out = numpy_func(*[ele.asnumpy() for ele in data_l])
        assert_almost_equal(saved_out_np, numpy_out, rtol=rtol, atol=atol)

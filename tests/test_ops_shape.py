"""Shape operators vs NumPy (forward, numeric gradients, infer_shape) and MXNet 1.9.1
behaviour recorded with the real library (shapes, quirks and error cases)."""
import json

import numpy as np
import pytest

import mxtorch as mx
from mxtorch.base import MXNetError
from mxtorch.ops import registry
from mxtorch.ops.shape import reshape_target
from helpers import check_op

RNG = np.random.RandomState(0)


def zeros(shape, dtype="float32"):
    """An all-zero NDArray (built from NumPy, independent of the creation operators)."""
    shape = (shape,) if isinstance(shape, int) else shape
    return mx.nd.array(np.zeros(shape, dtype=dtype), dtype=dtype)


def rand(*shape):
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


# ---------------------------------------------------------------------- Reshape
@pytest.mark.parametrize("dshape,spec,reverse,out", [
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)),
    ((2, 3, 4), (-1,), False, (24,)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4, 5), (-3, -2), False, (6, 4, 5)),
    ((2, 3, 4, 5), (0, -3, 5), False, (2, 12, 5)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((6,), (-4, 2, 3), False, (2, 3)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((2, 3, 4), (-1, 3, 0), True, (2, 3, 4)),
])
def test_reshape_codes(dshape, spec, reverse, out):
    assert reshape_target(dshape, spec, reverse) == out
    x = rand(*dshape)
    check_op("Reshape", [x], {"shape": spec, "reverse": reverse},
             lambda a: a.reshape(out), grad=x.size <= 24)


def test_reshape_alias_and_method_share_memory():
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    y = x.reshape((0, -1))
    assert y.shape == (2, 12)
    y[:] = 1
    assert x.asnumpy().sum() == 24
    assert mx.nd.reshape(x, shape=(-3, 0)).shape == (6, 4)


def test_reshape_target_shape_deprecated():
    x = rand(2, 3, 4)
    check_op("Reshape", [x], {"target_shape": (0, 4)}, lambda a: a.reshape(6, 4), grad=False)
    check_op("Reshape", [x], {"target_shape": (0, 0), "keep_highest": True},
             lambda a: a.reshape(2, 12), grad=False)
    assert mx.nd.Reshape(mx.nd.array(x), target_shape=(6, 0)).shape == (6, 4)


@pytest.mark.parametrize("spec", [(5, 5), (-1, -1), (0, 0, 0, 0), (-4, -1, -1, 0, 0),
                                  (-4, 5, -1, 0, 0), (-5,)])
def test_reshape_errors(spec):
    with pytest.raises(MXNetError, match="Reshape"):
        mx.nd.Reshape(zeros((2, 3, 4)), shape=spec)


def test_reshape_error_names_shapes():
    with pytest.raises(MXNetError, match=r"Reshape.*\(5, 5\).*\(2, 3, 4\)"):
        zeros((2, 3, 4)).reshape((5, 5))


def test_reshape_infer_backwards():
    op = registry.get("Reshape")
    ins, outs = op.infer_shape(op.parse_attrs({"shape": (4, 6)}), [(2, 0, 4)])
    assert ins == [(2, 3, 4)] and outs == [(4, 6)]
    ins, outs = op.infer_shape(op.parse_attrs({"shape": (0, -1)}), [(2, 3, 4)])
    assert outs == [(2, 12)]


def test_reshape_like():
    x, y = rand(30, 7), rand(15, 2, 4)
    check_op("reshape_like", [x, y], {"lhs_begin": 0, "lhs_end": 1, "rhs_begin": 0,
                                      "rhs_end": 2},
             lambda a, b: a.reshape(15, 2, 7), grad=[0])
    x, y = rand(2, 3, 4), rand(6, 4)
    check_op("reshape_like", [x, y], {}, lambda a, b: a.reshape(6, 4), grad=False)
    check_op("reshape_like", [x, y], {"lhs_begin": -3, "lhs_end": -1, "rhs_begin": -2,
                                      "rhs_end": -1},
             lambda a, b: a.reshape(6, 4), grad=False)
    with pytest.raises(MXNetError, match="reshape_like"):
        mx.nd.reshape_like(zeros((2, 3, 4)), zeros((6, 5)))


# ---------------------------------------------------------------------- simple permutations
def test_flatten_transpose_expand_squeeze():
    x = rand(2, 3, 4)
    check_op("Flatten", [x], {}, lambda a: a.reshape(2, 12))
    check_op("flatten", [rand(5)], {}, lambda a: a.reshape(5, 1), grad=False)
    check_op("transpose", [x], {}, lambda a: a.transpose())
    check_op("transpose", [x], {"axes": (1, 0, 2)}, lambda a: a.transpose(1, 0, 2))
    check_op("expand_dims", [x], {"axis": -1}, lambda a: a[..., None])
    check_op("expand_dims", [x], {"axis": -4}, lambda a: a[None])
    y = rand(2, 1, 3, 1)
    check_op("squeeze", [y], {"axis": (1,)}, lambda a: a.reshape(2, 3, 1))
    check_op("squeeze", [y], {}, lambda a: a.reshape(2, 3))
    check_op("squeeze", [y], {"axis": -1}, lambda a: a.reshape(2, 1, 3), grad=False)


def test_squeeze_never_0d():
    assert mx.nd.squeeze(zeros((1, 1))).shape == (1,)
    assert mx.nd.squeeze(zeros((1, 1)), axis=(0, 1)).shape == (1,)
    with pytest.raises(MXNetError, match="squeeze"):
        mx.nd.squeeze(zeros((2, 3)), axis=1)


@pytest.mark.parametrize("op,attrs", [("transpose", {"axes": (0,)}),
                                      ("transpose", {"axes": (-1, 0, 1)}),
                                      ("expand_dims", {"axis": 4}),
                                      ("expand_dims", {"axis": -5}),
                                      ("SwapAxis", {"dim1": 3, "dim2": 0})])
def test_axis_errors(op, attrs):
    with pytest.raises(MXNetError, match=op):
        getattr(mx.nd, op)(zeros((2, 3, 4)), **attrs)


def test_swapaxis():
    x = rand(2, 3, 4)
    check_op("SwapAxis", [x], {"dim1": 0, "dim2": 2}, lambda a: a.swapaxes(0, 2))
    check_op("swapaxes", [x], {"dim1": -1, "dim2": 0}, lambda a: a.swapaxes(-1, 0),
             grad=False)
    check_op("SwapAxis", [x], {}, lambda a: a, grad=False)


# ---------------------------------------------------------------------- Concat / stack
def test_concat():
    a, b, c = rand(2, 1, 3), rand(2, 2, 3), rand(2, 3, 3)
    check_op("Concat", [a, b, c], {"num_args": 3, "dim": 1},
             lambda *xs: np.concatenate(xs, axis=1))
    check_op("concat", [a, a], {"num_args": 2, "dim": -1},
             lambda *xs: np.concatenate(xs, axis=-1), grad=False)
    out = mx.nd.concat(mx.nd.array(a), mx.nd.array(b))  # dim defaults to 1
    assert out.shape == (2, 3, 3)
    out = mx.nd.Concat(*[mx.nd.array(a)] * 3, dim=0)
    assert out.shape == (6, 1, 3)


@pytest.mark.parametrize("other", [(2, 3, 5), (2, 3)])
def test_concat_mismatch(other):
    with pytest.raises(MXNetError, match="Concat"):
        mx.nd.concat(zeros((2, 3, 4)), zeros(other), dim=1)


def test_concat_dtype_mismatch():
    with pytest.raises(MXNetError, match="Concat"):
        mx.nd.concat(zeros((2,), dtype="int32"), zeros((2,)), dim=0)


def test_concat_stack_infer_shape():
    op = registry.get("Concat")
    attrs = op.parse_attrs({"num_args": 2, "dim": 1})
    assert op.infer_shape(attrs, [(2, 3), (2, 4)]) == ([(2, 3), (2, 4)], [(2, 7)])
    ins, outs = op.infer_shape(attrs, [(2, 3), None])
    assert ins == [(2, 3), (2, 0)] and outs == [(2, 0)]   # the concat dim is unknown
    # the output gives the other dims, not the concat dim (MXNet's inference)
    ins, outs = op.infer_shape(attrs, [(0, 3), (0, 0)], [(5, 7)])
    assert ins == [(5, 3), (5, 0)] and outs == [(5, 7)]
    ins, outs = op.infer_shape(attrs, [(2, 3), (0, 4)])
    assert ins == [(2, 3), (2, 4)] and outs == [(2, 7)]
    st = registry.get("stack")
    sattrs = st.parse_attrs({"num_args": 2, "axis": 1})
    assert st.infer_shape(sattrs, [(2, 3), None]) == ([(2, 3), (2, 3)], [(2, 2, 3)])
    assert st.infer_shape(sattrs, [(2, 0), (0, 3)]) == ([(2, 3), (2, 3)], [(2, 2, 3)])
    assert registry.get("Concat").input_names(attrs) == ["arg0", "arg1"]


def test_stack():
    a, b = rand(2, 3), rand(2, 3)
    check_op("stack", [a, b], {"num_args": 2, "axis": 1}, lambda *xs: np.stack(xs, 1))
    check_op("stack", [a, b], {"num_args": 2, "axis": -1}, lambda *xs: np.stack(xs, -1),
             grad=False)
    assert mx.nd.stack(mx.nd.array(a), mx.nd.array(b)).shape == (2, 2, 3)
    with pytest.raises(MXNetError, match="stack"):
        mx.nd.stack(zeros((2, 3)), zeros((3, 2)))


# ---------------------------------------------------------------------- split
def test_slice_channel():
    x = rand(2, 6, 2)
    check_op("SliceChannel", [x], {"num_outputs": 3, "axis": 1},
             lambda a: np.split(a, 3, axis=1))
    check_op("split", [rand(2, 3, 4)], {"num_outputs": 2, "axis": 0, "squeeze_axis": True},
             lambda a: [a[0], a[1]])
    check_op("split", [rand(2, 3, 4)], {"num_outputs": 2, "axis": -1},
             lambda a: np.split(a, 2, axis=-1), grad=False)
    one = mx.nd.split(zeros((2, 3, 4)), num_outputs=1, axis=2)
    assert isinstance(one, mx.nd.NDArray) and one.shape == (2, 3, 4)
    op = registry.get("SliceChannel")
    assert op.output_names(op.parse_attrs({"num_outputs": 1})) == ["output0"]
    assert op.output_names(op.parse_attrs({"num_outputs": 2})) == ["output0", "output1"]


@pytest.mark.parametrize("attrs", [{"num_outputs": 2, "axis": 1},
                                   {"num_outputs": 2, "axis": 2, "squeeze_axis": True}])
def test_slice_channel_errors(attrs):
    with pytest.raises(MXNetError, match="SliceChannel"):
        mx.nd.split(zeros((2, 3, 4)), **attrs)


def test_split_v2():
    x = rand(2, 3, 4)
    check_op("_split_v2", [x], {"indices": (0, 1), "axis": 2},
             lambda a: [a[..., :1], a[..., 1:]])
    check_op("_split_v2", [x], {"indices": (), "sections": 2, "axis": 2},
             lambda a: np.split(a, 2, axis=2), grad=False)
    check_op("_split_v2", [x], {"indices": (0, 1, 2, 3), "axis": 2, "squeeze_axis": True},
             lambda a: [a[..., i] for i in range(4)], grad=False)
    # MXNet: sections that do not divide the axis make the first parts one longer
    check_op("_split_v2", [rand(7, 2)], {"indices": (), "sections": 3, "axis": 0},
             lambda a: [a[:3], a[3:5], a[5:]])
    for idx in [(1, 3), (0, 2, 9)]:
        with pytest.raises(MXNetError, match="_split_v2"):
            mx.nd._internal._split_v2(mx.nd.array(x), indices=idx, axis=2)


def test_split_v2_symbol():
    data = mx.sym.var("data")
    sym = mx.sym.split_v2(data, (2, 5), axis=0)
    # the node MXNet 1.9.1 writes
    node = json.loads(sym.tojson())["nodes"][1]
    assert node["op"] == "_split_v2"
    assert node["attrs"] == {"axis": "0", "indices": "[0, 2, 5]", "sections": "0",
                             "squeeze_axis": "False"}
    assert sym.infer_shape(data=(7, 2))[1] == [(2, 2), (3, 2), (2, 2)]
    sym = mx.sym.split_v2(data, 3, axis=-1, squeeze_axis=True)
    x = rand(2, 3)
    outs = sym.eval(data=mx.nd.array(x))
    assert [o.shape for o in outs] == [(2,)] * 3
    np.testing.assert_array_equal(outs[2].asnumpy(), x[:, 2])
    with pytest.raises(ValueError):
        mx.sym.split_v2(data, [1, 2])


# ---------------------------------------------------------------------- slicing
@pytest.mark.parametrize("b,e,s", [(2, 8, None), (-3, None, None), (None, None, -1),
                                   (8, 2, -2), (8, None, -3), (2, 20, None),
                                   (20, None, None), (-20, None, None), (0, -20, None),
                                   (3, 5, -1), (9, -12, -1), (-1, -20, -1), (0, 0, None)])
def test_slice_1d_python_semantics(b, e, s):
    x = np.arange(10, dtype=np.float32)
    out = mx.nd.slice(mx.nd.array(x), begin=(b,), end=(e,), step=(s,) if s else ())
    np.testing.assert_array_equal(out.asnumpy(), x[b:e:s])


def test_slice():
    x = rand(3, 4, 5)
    check_op("slice", [x], {"begin": (None, 3, 0), "end": (None, 0, 5), "step": (1, -1, 2)},
             lambda a: a[:, 3:0:-1, 0:5:2])
    check_op("slice", [x], {"begin": (1,), "end": (3,)}, lambda a: a[1:3])
    check_op("crop", [x], {"begin": (0, 1), "end": (2, -1)}, lambda a: a[0:2, 1:-1],
             grad=False)
    for attrs in [{"begin": (1,), "end": (3,), "step": (0,)},
                  {"begin": (1, 0, 0, 0), "end": (3, 1, 1, 1)},
                  {"begin": (1,), "end": (3, 1)}]:
        with pytest.raises(MXNetError, match="slice"):
            mx.nd.slice(mx.nd.array(x), **attrs)


def test_slice_axis():
    x = rand(3, 4, 5)
    check_op("slice_axis", [x], {"axis": 2, "begin": 1, "end": -1}, lambda a: a[:, :, 1:-1])
    check_op("slice_axis", [x], {"axis": -2, "begin": -3, "end": None},
             lambda a: a[:, -3:], grad=False)
    for b, e in [(3, 20), (5, 3), (-20, 3), (0, -20)]:
        with pytest.raises(MXNetError, match="slice_axis"):
            mx.nd.slice_axis(zeros((10,)), axis=0, begin=b, end=e)
    with pytest.raises(MXNetError, match="slice_axis"):
        mx.nd.slice_axis(zeros((10,)), axis=1, begin=0, end=2)


def test_slice_like():
    x = rand(2, 3, 4)
    check_op("slice_like", [x, rand(1, 2, 3)], {}, lambda a, b: a[:1, :2, :3], grad=[0])
    check_op("slice_like", [x, rand(1, 2, 3)], {"axes": (-1,)}, lambda a, b: a[..., :3],
             grad=False)
    check_op("slice_like", [x, rand(1, 2)], {"axes": (0,)}, lambda a, b: a[:1], grad=False)
    for like, attrs in [((1, 2), {}), ((3, 2, 3), {}), ((1, 2), {"axes": (0, -1)})]:
        with pytest.raises(MXNetError, match="slice_like"):
            mx.nd.slice_like(mx.nd.array(x), zeros(like), **attrs)


def test_slice_assign():
    lhs, rhs = rand(3, 4), rand(2, 2)
    exp = lhs.copy()
    exp[1:3, ::2] = rhs
    check_op("_slice_assign", [lhs, rhs], {"begin": (1, None), "end": (3, None),
                                           "step": (1, 2)}, exp)
    exp = lhs.copy()
    exp[2:0:-1, 3:0:-2] = rhs
    check_op("_crop_assign", [lhs, rhs], {"begin": (2, 3), "end": (0, 0), "step": (-1, -2)},
             exp)
    exp = lhs.copy()
    exp[1:3, ::2] = 3
    check_op("_slice_assign_scalar", [lhs], {"scalar": 3, "begin": (1, None),
                                             "end": (3, None), "step": (1, 2)}, exp)
    with pytest.raises(MXNetError, match="_slice_assign"):
        mx.nd._internal._slice_assign(mx.nd.array(lhs), zeros((2, 3)),
                                      begin=(1, None), end=(3, None), step=(1, 2))


# ---------------------------------------------------------------------- tile / repeat / reverse
def test_tile_repeat_reverse():
    x = rand(2, 3)
    check_op("tile", [x], {"reps": (2, 1, 2)}, lambda a: np.tile(a, (2, 1, 2)))
    check_op("tile", [rand(2, 3, 4)], {"reps": (2,)}, lambda a: np.tile(a, 2), grad=False)
    check_op("tile", [x], {"reps": ()}, lambda a: a, grad=False)
    check_op("repeat", [x], {"repeats": 2, "axis": 1}, lambda a: np.repeat(a, 2, 1))
    check_op("repeat", [x], {"repeats": 2}, lambda a: np.repeat(a, 2))
    check_op("repeat", [x], {"repeats": 3, "axis": -2}, lambda a: np.repeat(a, 3, -2),
             grad=False)
    # MXNet: repeats=0 gives shape (0,) whatever the axis
    assert mx.nd.repeat(zeros((2, 2)), repeats=0, axis=-1).shape == (0,)
    check_op("reverse", [rand(2, 3, 4)], {"axis": (2, 0)}, lambda a: a[::-1, :, ::-1])
    check_op("flip", [x], {"axis": 1}, lambda a: a[:, ::-1], grad=False)
    for op, attrs in [("tile", {"reps": (2, 0)}), ("tile", {"reps": (2, -1)}),
                      ("repeat", {"repeats": -1, "axis": 0}), ("reverse", {"axis": -1}),
                      ("reverse", {"axis": 2})]:
        with pytest.raises(MXNetError, match=op):
            getattr(mx.nd, op)(zeros((2, 3)), **attrs)


# ---------------------------------------------------------------------- broadcast
def test_broadcast_ops():
    check_op("broadcast_to", [rand(1, 3)], {"shape": (4, 0)},
             lambda a: np.broadcast_to(a, (4, 3)))
    check_op("broadcast_axis", [rand(1, 3, 1)], {"axis": (0, 2), "size": (2, 4)},
             lambda a: np.broadcast_to(a, (2, 3, 4)))
    check_op("broadcast_axes", [rand(1, 3, 1)], {}, lambda a: a, grad=False)
    check_op("broadcast_like", [rand(1, 3), rand(4, 3)], {},
             lambda a, b: np.broadcast_to(a, (4, 3)), grad=[0])
    check_op("broadcast_like", [rand(1, 3, 1), rand(5, 6)],
             {"lhs_axes": (0, 2), "rhs_axes": (1, 0)},
             lambda a, b: np.broadcast_to(a, (6, 3, 5)), grad=[0])
    check_op("broadcast_like", [rand(1, 3, 1), rand(5, 6)],
             {"lhs_axes": (-1,), "rhs_axes": (-2,)},
             lambda a, b: np.broadcast_to(a, (1, 3, 5)), grad=False)


@pytest.mark.parametrize("op,args,attrs", [
    ("broadcast_to", [(2, 3, 4)], {"shape": (2, 6, 4)}),
    ("broadcast_to", [(3, 1)], {"shape": (2, 3, 4)}),
    ("broadcast_axis", [(3, 1)], {"axis": -1, "size": 4}),
    ("broadcast_axis", [(3, 1)], {"axis": 0, "size": 4}),
    ("broadcast_axis", [(1, 3, 1)], {"axis": (0, 2), "size": (2,)}),
    ("broadcast_like", [(3, 1), (2, 3, 4)], {}),
    ("broadcast_like", [(2, 1), (3, 4)], {}),
    ("broadcast_like", [(1, 3, 1), (5, 6)], {"lhs_axes": (0,), "rhs_axes": (0, 1)}),
    ("broadcast_like", [(2, 3, 1), (5, 6)], {"lhs_axes": (0,), "rhs_axes": (0,)}),
])
def test_broadcast_errors(op, args, attrs):
    with pytest.raises(MXNetError, match=op):
        getattr(mx.nd, op)(*[zeros(s) for s in args], **attrs)


# ---------------------------------------------------------------------- Pad
def _np_pad(a, pw, mode, value=0.0):
    pairs = list(zip(pw[::2], pw[1::2]))
    if mode == "constant":
        return np.pad(a, pairs, mode="constant", constant_values=value)
    return np.pad(a, pairs, mode="edge" if mode == "edge" else "reflect")


@pytest.mark.parametrize("mode,pw", [("constant", (0, 0, 0, 0, 1, 2, 2, 1)),
                                     ("edge", (0, 0, 0, 0, 1, 1, 2, 2)),
                                     ("reflect", (0, 0, 0, 0, 1, 1, 2, 2)),
                                     ("edge", (0, 0, 0, 0, 5, 5, 1, 1))])
def test_pad(mode, pw):
    check_op("Pad", [rand(1, 2, 3, 3)], {"mode": mode, "pad_width": pw,
                                         "constant_value": 0.5},
             lambda a: _np_pad(a, pw, mode, 0.5))


def test_pad_5d_and_errors():
    pw = (0, 0, 0, 0, 1, 1, 1, 1, 1, 1)
    check_op("pad", [rand(1, 1, 2, 2, 2)], {"mode": "reflect", "pad_width": pw},
             lambda a: _np_pad(a, pw, "reflect"), grad=False)
    bad = [((3, 4), "constant", (1, 1, 1, 1)), ((1, 1, 3, 4), "constant", (1, 0) + (0,) * 6),
           ((1, 1, 3, 4), "constant", (0, 0, 1, 1)),
           ((1, 1, 3, 4), "reflect", (0, 0, 0, 0, 3, 3, 1, 1))]
    for shape, mode, pw in bad:
        with pytest.raises(MXNetError, match="Pad"):
            mx.nd.Pad(zeros(shape), mode=mode, pad_width=pw)
    with pytest.raises(MXNetError, match="Pad"):
        mx.nd.Pad(zeros((1, 1, 2, 2), dtype="int32"), mode="constant",
                  pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    with pytest.raises(MXNetError, match="mode"):
        mx.nd.Pad(zeros((1, 1, 2, 2)), mode="wrap", pad_width=(0,) * 8)


# ---------------------------------------------------------------------- depth/space, diag
def test_depth_space():
    x = np.arange(16, dtype=np.float32).reshape(1, 8, 1, 2)
    d2s = check_op("depth_to_space", [x], {"block_size": 2})[0]
    # values recorded with MXNet 1.9.1
    assert d2s.shape == (1, 2, 2, 4)
    np.testing.assert_array_equal(d2s.asnumpy().ravel()[:12],
                                  [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7])
    y = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    s2d = check_op("space_to_depth", [y], {"block_size": 2})[0]
    assert s2d.shape == (1, 4, 2, 2)
    np.testing.assert_array_equal(s2d.asnumpy().ravel()[:12],
                                  [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14])
    back = mx.nd.depth_to_space(s2d, block_size=2)
    np.testing.assert_array_equal(back.asnumpy(), y)
    with pytest.raises(MXNetError, match="depth_to_space"):
        mx.nd.depth_to_space(zeros((1, 4, 2, 2)), block_size=3)
    with pytest.raises(MXNetError, match="space_to_depth"):
        mx.nd.space_to_depth(zeros((1, 1, 3, 4)), block_size=2)


@pytest.mark.parametrize("op,shape,block", [
    ("depth_to_space", (1, 4, 0, 3), 2),      # MXNet: no dimension may be 0
    ("depth_to_space", (1, 0, 2, 2), 2),
    ("depth_to_space", (1, 4, 2, 2), 0),
    ("space_to_depth", (1, 0, 2, 2), 2),
    ("space_to_depth", (0, 1, 2, 2), 2),
    ("space_to_depth", (1, 1, 2, 2), 0),
    ("space_to_depth", (1, 1, 2), 1),
])
def test_depth_space_errors(op, shape, block):
    with pytest.raises(MXNetError, match=op):
        getattr(mx.nd, op)(zeros(shape), block_size=block)


def test_diag():
    check_op("diag", [rand(3)], {"k": 1}, lambda a: np.diag(a, 1))
    check_op("diag", [rand(3, 4)], {"k": -1}, lambda a: np.diag(a, -1))
    check_op("diag", [rand(2, 3, 4)], {"k": 1, "axis1": -1, "axis2": 0},
             lambda a: np.diagonal(a, 1, 2, 0))
    check_op("diag", [rand(2, 3, 4)], {"k": 4, "axis1": 1, "axis2": 2},
             lambda a: np.diagonal(a, 4, 1, 2), grad=False)
    with pytest.raises(MXNetError, match="diag"):
        mx.nd.diag(zeros((3, 4)), k=5)


# ---------------------------------------------------------------------- registry facts
def test_defaults_and_aliases():
    """Defaults and aliases as MXNet 1.9.1 lists them."""
    get = registry.get
    assert get("concat") is get("Concat") and get("split") is get("SliceChannel")
    assert get("flip") is get("reverse") and get("broadcast_axes") is get("broadcast_axis")
    assert get("pad") is get("Pad") and get("swapaxes") is get("SwapAxis")
    assert get("_crop_assign") is get("_slice_assign") and get("crop") is get("slice")
    assert get("Concat").parse_attrs({"num_args": 2}).dim == 1
    assert get("stack").parse_attrs({"num_args": 2}).axis == 0
    assert get("SliceChannel").parse_attrs({"num_outputs": 2}).axis == 1
    assert get("_split_v2").parse_attrs({"indices": "(0, 2)"}).axis == 1
    assert get("slice_axis").parse_attrs({"axis": 0, "begin": 1, "end": "None"}).end is None
    assert get("diag").parse_attrs({}) == (0, 0, 1)
    with pytest.raises(MXNetError, match="end"):
        get("slice_axis").parse_attrs({"axis": 0, "begin": 1})


def test_fluent_methods():
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    assert x.expand_dims(axis=0).shape == (1, 2, 3)
    assert x.tile(reps=(2,)).shape == (2, 6)
    assert x.swapaxes(dim1=0, dim2=1).shape == (3, 2)
    assert x.slice_axis(axis=1, begin=1, end=None).shape == (2, 2)
    assert mx.nd.broadcast_to(x, shape=(2, 0)).shape == (2, 3)
    with pytest.raises(ValueError, match="requested shape"):   # MXNet: the method checks
        x.broadcast_to(shape=(2, 0))


def test_broadcast_like_refuses_empty_axes():
    lhs, rhs = mx.nd.ones((1, 2)), mx.nd.ones((3, 2))
    with pytest.raises(MXNetError, match="empty axes"):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0,)).shape == (3, 2)


def test_reshape_target_shape_inference():
    # the deprecated target_shape API (0 = the size that makes the count match)
    net = mx.sym.Reshape(mx.sym.var("data"), target_shape=(2, 0))
    assert mx.sym.load_json(net.tojson()).infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]


def test_attributes_given_as_numpy_values():
    """NumPy scalars, dtypes, 0-d and one-element arrays parse as MXNet's front end reads
    them (their str()); several elements print without commas and MXNet refuses them."""
    src = np.arange(20, dtype="float32").reshape(1, 2, 1, 10)
    x = mx.nd.array(src)
    assert mx.nd.reshape(x, shape=np.array(20)).shape == (20,)
    assert mx.nd.reshape(x, shape=(np.int64(4), np.int32(5))).shape == (4, 5)
    np.testing.assert_array_equal(mx.nd.sum(x, axis=np.array([3])).asnumpy(),
                                  src.sum(axis=3))
    np.testing.assert_array_equal(mx.nd.sum(x, axis=np.array(3)).asnumpy(), src.sum(axis=3))
    out = mx.nd.sum(x, axis=np.int64(1), keepdims=np.array(True))
    np.testing.assert_array_equal(out.asnumpy(), src.sum(axis=1, keepdims=True))
    assert mx.nd.sum(x, axis=1, keepdims=np.bool_(False)).shape == (1, 1, 10)
    assert mx.nd.cast(x, dtype=np.dtype("float16")).dtype == np.float16
    np.testing.assert_allclose(mx.nd.clip(x, a_min=np.array(2.5), a_max=np.float32(4)).asnumpy(),
                               np.clip(src, 2.5, 4))
    sym = mx.sym.broadcast_to(mx.sym.var("a"), shape=(np.int64(1), 2, np.int32(9), 10))
    assert sym.infer_shape(a=(1, 2, 1, 10))[1] == [(1, 2, 9, 10)]
    with pytest.raises(MXNetError, match=r"Invalid Parameter format for shape expect "
                       r"Shape\(tuple\) but value='\[ 1  2  9 10\]', in operator broadcast_to"):
        mx.nd.broadcast_to(x, shape=np.array([1, 2, 9, 10]))
    with pytest.raises(MXNetError, match="for axes expect"):
        mx.nd.transpose(x, axes=np.array([0, 2, 1, 3]))

"""oneDNN operator fusion for inference on CPU (MXNet's MKLDNN subgraph backend).

MXNet 1.9.1 (``SgMKLDNNConvProperty``) rewrites, for inference, each Convolution followed
by BatchNorm, ReLU and an elementwise sum into one oneDNN convolution with the BatchNorm
folded into the weights and the sum and ReLU as post-ops. The same is done here on a
:class:`~mxtorch.graph.compile.GraphProgram`: each such group becomes one
``torch.ops.mkldnn._convolution_pointwise`` call on channels-last activations, with the
weights folded once and reordered into oneDNN's layout for the input shape. Everything
else runs the operators' own computes, as in the plain program. A 3x3 stride-1
convolution may instead run as a Winograd F(4x4, 3x3) or F(2x2, 3x3) kernel
(:mod:`.winograd`) when that is measured faster on its shape, as oneDNN itself does on
AVX-512 machines.

The operators declare their part (``OpDef.fusion_role``: ``conv`` for a 2-D NCHW
convolution, ``batchnorm`` for a BatchNorm over axis 1, ``add`` for an elementwise sum,
``relu``). A group is formed only where it cannot change a result: the convolution's
weights and the BatchNorm's parameters and statistics are frozen constants, and every
fused intermediate has exactly one consumer and is not a graph output.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Callable, Sequence

import torch
import torch.fx as fx

from ....ops.nn import _conv_plan
from ...compile import _bound, _ident, emit_node
from ...ir import Node
from ...passes import infer_graph_shapes
from . import winograd

__all__ = ["available", "fold_batchnorm", "fuse_program"]

log = logging.getLogger(__name__)

_CL = torch.channels_last


def prepare() -> None:
    """Build (once per process) what the fusion's kernels compile: the Winograd
    transforms, unless ``MXTORCH_WINOGRAD`` switches Winograd off."""
    try:
        if winograd.mode() == "off":
            return
    except ValueError:
        return   # reported when the fusion runs
    winograd.native_transforms()


def available() -> bool:
    """Whether this torch build has oneDNN's fused convolution operators."""
    try:
        return (torch.backends.mkldnn.is_available()
                and hasattr(torch.ops.mkldnn, "_convolution_pointwise")
                and hasattr(torch.ops.mkldnn, "_reorder_convolution_weight"))
    except (AttributeError, RuntimeError):
        return False


def fold_batchnorm(weight: torch.Tensor, bias: torch.Tensor | None, gamma: torch.Tensor,
                   beta: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, eps: float,
                   fix_gamma: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Fold an inference BatchNorm into the convolution (or dense layer) before it.

    Returns ``(weight', bias')`` with ``conv(x, weight', bias') == BN(conv(x, weight, bias))``
    where BN uses the moving statistics. # MXNet: ``fix_gamma`` means gamma == 1.
    """
    g = torch.ones_like(gamma) if fix_gamma else gamma
    scale = g * torch.rsqrt(var + eps)
    shape = (-1,) + (1,) * (weight.dim() - 1)
    new_w = weight * scale.reshape(shape)
    b = bias if bias is not None else torch.zeros_like(mean)
    new_b = (b - mean) * scale + beta
    return new_w, new_b


def _role(n: Node) -> str | None:
    return n.op.fusion_role_of(n.parsed)


class _Group:
    """One fused Convolution[+BatchNorm][+add][+ReLU] chain."""
    __slots__ = ("conv", "bn", "add", "other", "relu", "last")

    def __init__(self, conv: Node):
        self.conv = conv
        self.bn: Node | None = None
        self.add: Node | None = None
        self.other = None  # the add's other input entry
        self.relu: Node | None = None
        self.last = conv

    def members(self) -> list[Node]:
        return [n for n in (self.conv, self.bn, self.add, self.relu) if n is not None]


class _Fuser:
    def __init__(self, program, tensors: Sequence[torch.Tensor], const_idx: Sequence[int]):
        self.program = program
        self.const = {id(program.input_nodes[i]): tensors[i] for i in const_idx}
        self.tensors = tensors
        self.consumers: dict[tuple, list[Node]] = defaultdict(list)
        for n in program.nodes:
            for e in n.inputs:
                self.consumers[(id(e.node), e.index)].append(n)
        self.heads = {(id(h.node), h.index) for h in program.heads}
        self.shapes = infer_graph_shapes(
            program.heads, {name: tuple(t.shape) for name, t in
                            zip(program.input_names, tensors)})
        self.workspace = winograd.Workspace()
        self.winograd_mode = winograd.mode()
        self.winograd_used = 0

    def _only_consumer(self, node: Node, index: int = 0) -> Node | None:
        key = (id(node), index)
        users = self.consumers.get(key, ())
        if key in self.heads or len(users) != 1:
            return None
        user = users[0]
        if sum(1 for e in user.inputs if (id(e.node), e.index) == key) != 1:
            return None
        return user

    def _constant(self, n: Node, positions: Sequence[int]) -> bool:
        for p in positions:
            t = self.const.get(id(n.inputs[p].node))
            if not n.inputs[p].node.is_variable or t is None or t.dtype != torch.float32:
                return False
        return True

    def _conv_ok(self, n: Node) -> bool:
        if _role(n) != "conv":
            return False
        data = self.shapes.get((id(n.inputs[0].node), n.inputs[0].index))
        return (data is not None and len(data) == 4 and 0 not in data
                and self._constant(n, range(1, len(n.inputs))))

    def _bn_ok(self, n: Node) -> bool:
        if _role(n) != "batchnorm":
            return False
        if any(self.consumers.get((id(n), i)) or (id(n), i) in self.heads
               for i in range(1, n.num_outputs())):
            return False
        return self._constant(n, range(1, 5))

    def groups(self) -> list[_Group]:
        out = []
        claimed: set[int] = set()  # an add joins at most one group (either summand's)
        for n in self.program.nodes:
            if n.is_variable or not self._conv_ok(n):
                continue
            g = _Group(n)
            nxt = self._only_consumer(n)
            if nxt is not None and self._bn_ok(nxt):
                g.bn = g.last = nxt
                nxt = self._only_consumer(nxt)
            if (nxt is not None and _role(nxt) == "add" and len(nxt.inputs) == 2
                    and id(nxt) not in claimed):
                mine = [e for e in nxt.inputs if e.node is g.last]
                other = [e for e in nxt.inputs if e.node is not g.last]
                out_shape = self.shapes.get((id(g.last), 0))
                if (len(mine) == 1 and len(other) == 1
                        and self.shapes.get((id(other[0].node), other[0].index)) == out_shape):
                    g.add, g.other, g.last = nxt, other[0], nxt
                    claimed.add(id(nxt))
                    nxt = self._only_consumer(nxt)
            if nxt is not None and _role(nxt) == "relu":
                g.relu = g.last = nxt
            out.append(g)
        return out

    def kernel(self, g: _Group, fresh_other: bool) -> Callable:
        """The fused call for one group: ``fn(data)`` or ``fn(data, other)``."""
        conv = g.conv
        data_shape = self.shapes[(id(conv.inputs[0].node), conv.inputs[0].index)]
        weight = self.const[id(conv.inputs[1].node)]
        bias = self.const[id(conv.inputs[2].node)] if len(conv.inputs) > 2 else None
        cfg = _conv_plan(conv.parsed, tuple(data_shape), tuple(weight.shape))
        if g.bn is not None:
            gamma, beta, mean, var = (self.const[id(e.node)] for e in g.bn.inputs[1:5])
            weight, bias = fold_batchnorm(weight, bias, gamma, beta, mean, var,
                                          g.bn.parsed.eps, g.bn.parsed.fix_gamma)
        bias = None if bias is None else bias.contiguous()
        direct = self._onednn(g, weight, bias, data_shape, cfg, fresh_other)
        if (self.winograd_mode == "off"
                or not winograd.applicable(weight, cfg.pad, cfg.stride, cfg.dilate,
                                           conv.parsed.num_group)):
            return direct
        relu = g.relu is not None
        if self.winograd_mode == "on":
            self.winograd_used += 1
            return self._winograd(g, weight, bias, data_shape, relu, winograd.F4)
        # auto: time the direct convolution and Winograd on this shape; Winograd is kept
        # only where it is at least 10% faster (timings on a busy machine vary)
        kernels = [direct, self._winograd(g, weight, bias, data_shape, relu, winograd.F4)]
        if winograd.few_tiles(data_shape):
            kernels.append(self._winograd(g, weight, bias, data_shape, relu, winograd.F2))
        args = (torch.randn(data_shape).contiguous(memory_format=_CL),)
        if g.add is not None:
            args += (torch.randn(self.shapes[(id(g.last), 0)]).contiguous(
                memory_format=_CL),)
        times = winograd.timings(kernels, args)
        log.debug("%s: oneDNN %.3f ms, Winograd %s ms", g.conv.name, times[0] * 1e3,
                  " / ".join(f"{t * 1e3:.3f}" for t in times[1:]))
        # F2 streams 16/9 of the weights where F4 streams 4x: in a network, where each
        # layer's weights come from memory, it gains more than timings on cached
        # weights show (resnet18 b1: 3% faster with F2 on the 14x14 stage at equal
        # timings), so it is kept within 10% of F4
        best = 2 if len(times) == 3 and times[2] <= 1.1 * times[1] else 1
        if times[best] > 0.9 * times[0]:
            return direct
        self.winograd_used += 1
        return kernels[best]

    def _winograd(self, g: _Group, weight: torch.Tensor, bias: torch.Tensor | None,
                  data_shape, relu: bool, tiles) -> Callable:
        fn = winograd.winograd_conv(weight, bias, data_shape, relu, self.workspace,
                                    tiles=tiles)
        fn.__name__ = _ident(g.last.name) + ("_winograd" if tiles is winograd.F4
                                             else "_winograd2x2")
        return fn

    def _onednn(self, g: _Group, weight: torch.Tensor, bias: torch.Tensor | None,
                data_shape, cfg, fresh_other: bool) -> Callable:
        """The group as one oneDNN call, weights prepacked for ``data_shape``."""
        pad, stride, dilate = list(cfg.pad), list(cfg.stride), list(cfg.dilate)
        groups = g.conv.parsed.num_group
        weight = torch.ops.mkldnn._reorder_convolution_weight(
            weight.contiguous(), pad, stride, dilate, groups, list(data_shape))
        unary = "relu" if g.relu is not None else "none"
        ops = torch.ops.mkldnn
        if g.add is None:
            def fused(x):
                return ops._convolution_pointwise(x.contiguous(memory_format=_CL), weight,
                                                  bias, pad, stride, dilate, groups, unary,
                                                  [], "")
        elif fresh_other:
            # the other summand is a fresh oneDNN result used only here: sum into it
            def fused(x, other):
                return ops._convolution_pointwise_.binary(
                    other, x.contiguous(memory_format=_CL), weight, bias, pad, stride,
                    dilate, groups, "add", None, unary, [], "")
        else:
            def fused(x, other):
                return ops._convolution_pointwise.binary(
                    x.contiguous(memory_format=_CL), other.contiguous(memory_format=_CL),
                    weight, bias, pad, stride, dilate, groups, "add", None, unary, [], "")
        fused.__name__ = _ident(g.last.name) + "_onednn"
        return fused


def _dense(t):
    return t.contiguous() if isinstance(t, torch.Tensor) else t


def fuse_program(program, tensors: Sequence[torch.Tensor], const_idx: Sequence[int],
                 device) -> tuple[fx.GraphModule, int]:
    """The inference program of ``program`` with oneDNN-fused convolution groups.

    Returns ``(module, number of fused groups)``; the module takes the same inputs as
    the plain program (``program.input_names`` order) and returns dense outputs.
    """
    fuser = _Fuser(program, tensors, const_idx)
    groups = fuser.groups()
    final = {id(g.last): g for g in groups}
    absorbed = {id(n) for g in groups for n in g.members() if n is not g.last}
    fused_out = {id(g.last) for g in groups}
    graph = fx.Graph()
    env: dict[tuple, fx.Node] = {}
    for n in program.input_nodes:
        env[(id(n), 0)] = graph.placeholder(_ident(n.name))
    for n in program.nodes:
        if n.is_variable or id(n) in absorbed:
            continue
        g = final.get(id(n))
        if g is not None:
            data = env[(id(g.conv.inputs[0].node), g.conv.inputs[0].index)]
            args = (data,)
            fresh = False
            if g.add is not None:
                args += (env[(id(g.other.node), g.other.index)],)
                fresh = (id(g.other.node) in fused_out
                         and len(fuser.consumers[(id(g.other.node), g.other.index)]) == 1
                         and (id(g.other.node), g.other.index) not in fuser.heads)
            env[(id(n), 0)] = graph.call_function(fuser.kernel(g, fresh), args)
            continue
        emit_node(graph, env, n, _bound(n, False, device))
    fuser.workspace.bufs.clear()  # sized by the timing runs; regrown by the kernels kept
    log.debug("%d of %d convolution groups use Winograd", fuser.winograd_used, len(groups))
    graph.output(tuple(graph.call_function(_dense, (env[(id(h.node), h.index)],))
                       for h in program.heads))
    return fx.GraphModule(torch.nn.Module(), graph, class_name="FusedProgram"), len(groups)

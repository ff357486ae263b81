"""The graph pass behind ``amp.convert_symbol``: a copy of a float32 graph with ``amp_cast``
and ``amp_multicast`` nodes where MXNet 1.9.1's ``ReducePrecision`` pass puts them, and the
``__dtype__`` of its parameters set from the types inferred afterwards."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...base import DTYPE_NP_TO_MX, MXNetError, dtype_np
from ...graph.passes import infer_graph_types
from ...ops import registry
from ...graph.ir import Entry, Node, topo_order

__all__ = ["Lists", "reduce_precision"]

_FP32 = "float32"


@dataclass
class Lists:
    """What the pass does to each operator (MXNet's lists, or the user's overrides)."""

    target: str                        # 'float16' or 'bfloat16'
    target_ops: set[str]
    fp32_ops: set[str]
    widest_ops: set[str]
    conditional: dict[str, dict[str, list[str]]]   # op -> attribute -> values
    excluded: set[str] = field(default_factory=set)


# MXNet: a cast node is named after the output it casts: by the output's name for the
# operators that declare their output names (FListOutputNames), by its index for the others
# (``fc1_output_amp_cast_float32`` but ``relu0_0_amp_cast_float32``). The registry does not
# record which operators declare them in MXNet, so these are MXNet 1.9.1's ones.
_NAMED_OUTPUTS = frozenset("""
Activation BatchNorm BatchNorm_v1 BilinearSampler CTCLoss Concat Convolution Convolution_v1
Correlation Crop Custom Deconvolution Dropout FullyConnected GridGenerator GroupNorm
IdentityAttachKLSparseReg InstanceNorm L2Normalization LRN LayerNorm LeakyReLU MakeLoss Pad
Pooling Pooling_v1 RNN ROIPooling SVMOutput SequenceLast SequenceMask SequenceReverse
SliceChannel SoftmaxActivation SoftmaxOutput SpatialTransformer SwapAxis UpSampling
_CrossDeviceCopy _contrib_BatchNormWithReLU _contrib_DeformableConvolution
_contrib_DeformablePSROIPooling _contrib_ModulatedDeformableConvolution
_contrib_MultiBoxDetection _contrib_MultiBoxPrior _contrib_MultiBoxTarget
_contrib_MultiProposal _contrib_PSROIPooling _contrib_Proposal _contrib_ROIAlign
_contrib_RROIAlign _contrib_SyncBatchNorm _contrib_count_sketch _contrib_fft _contrib_hawkesll
_contrib_ifft _contrib_index_array _contrib_interleaved_matmul_encdec_qk
_contrib_interleaved_matmul_encdec_valatt _contrib_interleaved_matmul_selfatt_qk
_contrib_interleaved_matmul_selfatt_valatt _npi_concatenate _npi_dstack _npi_hstack
_npi_matmul _npi_std _npi_var _rnn_param_concat col2im elemwise_add im2col make_loss softmax
softmin""".split())


def _suffix(e: Entry) -> str:
    """The part of a cast node's name that says which output of its source it casts."""
    node = e.node
    if node.is_variable:
        return ""
    if node.op.name in _NAMED_OUTPUTS:
        return "_" + node.output_names()[e.index]
    return f"_{e.index}"


class _Pass:
    """One run of the pass: the mirror of each node and the known dtype of each entry."""

    def __init__(self, lists: Lists, data_names: set[str], cast_optional_params: bool):
        self.lists = lists
        self.data_names = data_names
        self.cast_optional = cast_optional_params
        self.mirror: dict[int, Node] = {}
        self.fp32: dict[tuple, Entry] = {}     # (id(old node), index) -> float32 entry
        self.low: dict[tuple, Entry] = {}      # (id(old node), index) -> target-dtype entry

    # -------------------------------------------------------------- helpers
    def same(self, e: Entry) -> Entry:
        return Entry(self.mirror[id(e.node)], e.index)

    def cast(self, e: Entry, dtype: str, known: dict) -> Entry:
        """An ``amp_cast`` of ``e``'s mirror to ``dtype``, remembered in ``known``."""
        node = Node(registry.get("amp_cast"), f"{e.node.name}{_suffix(e)}_amp_cast_{dtype}",
                    {"dtype": dtype}, [self.same(e)])
        out = Entry(node, 0)
        known[(id(e.node), e.index)] = out
        return out

    def input_as(self, e: Entry, dtype: str) -> Entry:
        """``e`` in ``dtype``: a mirror already known in it, else a new cast."""
        known = self.low if dtype == self.lists.target else self.fp32
        key = (id(e.node), e.index)
        return known[key] if key in known else self.cast(e, dtype, known)

    def record_outputs(self, node: Node, new: Node, out_types: list) -> None:
        for i, t in enumerate(out_types):
            if t == self.lists.target:
                self.low[(id(node), i)] = Entry(new, i)
            elif t == _FP32:
                self.fp32[(id(node), i)] = Entry(new, i)

    @staticmethod
    def infer(node: Node, first: str) -> tuple[list, list] | None:
        """The node's input/output dtypes when its first input is ``first`` (None: unknown)."""
        try:
            return node.op.infer_type(node.parsed, [first] + [None] * (len(node.inputs) - 1))
        except MXNetError:
            return None

    # -------------------------------------------------------------- node kinds
    def to_fp32(self, node: Node, new: Node, mutable: set[int]) -> None:
        """Every input in float32 (float32 operators, excluded and conditional nodes)."""
        for i in range(node.num_outputs()):
            self.fp32[(id(node), i)] = Entry(new, i)
        for i, e in enumerate(node.inputs):
            key = (id(e.node), e.index)
            if key in self.fp32:
                new.inputs.append(self.fp32[key])
            elif e.node.is_variable or i in mutable:
                new.inputs.append(self.same(e))   # variables are float32 already
            else:
                new.inputs.append(self.cast(e, _FP32, self.fp32))

    def to_target(self, node: Node, new: Node, mutable: set[int]) -> None:
        """Inputs cast to the target dtype where the operator takes it."""
        target = self.lists.target
        res = self.infer(node, target)
        in_types = res[0] if res else [None] * len(node.inputs)
        if res:
            self.record_outputs(node, new, res[1])
        for i, e in enumerate(node.inputs):
            key = (id(e.node), e.index)
            optional = self.cast_optional and e.node.is_variable and \
                e.node.name not in self.data_names
            if key in self.low:
                new.inputs.append(self.low[key])
            elif optional or i in mutable or in_types[i] not in (target, None):
                # MXNet: parameters converted offline, mutable inputs and inputs the
                # operator wants in another type (BatchNorm's gamma) are not cast
                new.inputs.append(self.same(e))
                if self.cast_optional and e.node.is_variable:
                    self.low[key] = self.same(e)
            else:
                new.inputs.append(self.cast(e, target, self.low))

    def to_widest(self, node: Node, new: Node) -> None:
        """All inputs in one dtype: casts when every input's dtype is known, else a multicast."""
        keys = [(id(e.node), e.index) for e in node.inputs]
        if not all(k in self.low or k in self.fp32 for k in keys):
            first = node.inputs[0]
            multi = Node(registry.get("amp_multicast"),
                         f"{first.node.name}{_suffix(first)}_amp_multicast",
                         {"num_outputs": str(len(keys))}, [self.same(e) for e in node.inputs])
            new.inputs.extend(Entry(multi, i) for i in range(len(keys)))
            return
        dtype = _FP32 if any(k in self.fp32 for k in keys) else self.lists.target
        self.record_outputs(node, new, [dtype] * node.num_outputs())
        new.inputs.extend(self.input_as(e, dtype) for e in node.inputs)

    def other(self, node: Node, new: Node) -> None:
        """Inputs unchanged; outputs' dtypes followed from a known first input."""
        if node.inputs:
            key = (id(node.inputs[0].node), node.inputs[0].index)
            if key in self.low or key in self.fp32:
                res = self.infer(node, self.lists.target if key in self.low else _FP32)
                if res:
                    self.record_outputs(node, new, res[1])
        new.inputs.extend(self.same(e) for e in node.inputs)

    # -------------------------------------------------------------- driver
    def conditional_fp32(self, node: Node) -> bool:
        rules = self.lists.conditional.get(node.op.name)
        if not rules or node.name in self.lists.excluded:
            return False
        return any(node.attrs.get(attr) in values for attr, values in rules.items())

    def visit(self, node: Node) -> None:
        new = Node(node.op, node.name, node.attrs, [], node.subgraphs)
        new._parsed = node._parsed
        lists = self.lists
        if node.name in lists.excluded or (not node.is_variable and
                                           node.op.name in lists.fp32_ops):
            self.to_fp32(node, new, set())
        elif node.is_variable:
            pass
        elif node.op.name in lists.target_ops:
            self.to_target(node, new, set(node.aux_positions()))
        elif node.op.name in lists.widest_ops:
            if node.aux_positions():
                raise MXNetError(f"amp: can't handle the widest_dtype_ops with mutable "
                                 f"inputs ({node.op.name} {node.name})")
            self.to_widest(node, new)
        elif self.conditional_fp32(node):
            self.to_fp32(node, new, set(node.aux_positions()))
        else:
            self.other(node, new)
        self.mirror[id(node)] = new

    def outputs(self, heads: list[Entry]) -> list[Entry]:
        """The heads in float32 (cast where their dtype is not known to be float32)."""
        return [self.input_as(e, _FP32) for e in heads]


def reduce_precision(heads: list[Entry], lists: Lists, data_names: list[str],
                     model_params: list[str], cast_optional_params: bool) -> list[Entry]:
    """The converted copy of the graph ``heads``; ``data_names`` are float32 inputs."""
    run = _Pass(lists, set(data_names), cast_optional_params)
    for node in topo_order(heads):
        run.visit(node)
    new_heads = run.outputs(heads)
    _set_param_dtypes(new_heads, lists.target, data_names, model_params, cast_optional_params)
    return new_heads


def _set_param_dtypes(heads: list[Entry], target: str, data_names: list[str],
                      model_params: list[str], cast_optional_params: bool) -> None:
    """Write ``__dtype__`` on the inputs as MXNet does: on ``model_params`` when given, else
    on the inputs that already carry one; the type is the inferred one (float32 if unknown)."""
    variables = [n for n in topo_order(heads) if n.is_variable]
    # MXNet: the types are inferred from the data inputs alone, not the __dtype__ hints
    hints = {id(n): n.attrs.pop("__dtype__") for n in variables if "__dtype__" in n.attrs}
    types = infer_graph_types(heads, {name: _FP32 for name in data_names})
    for n in variables:
        if id(n) in hints:
            n.attrs["__dtype__"] = hints[id(n)]
    if cast_optional_params:
        _lower_unknown_params(heads, target, types)
    params = set(model_params)
    for n in variables:
        if (n.name in params) if params else ("__dtype__" in n.attrs):
            t = types.get((id(n), 0)) or _FP32
            n.attrs["__dtype__"] = str(DTYPE_NP_TO_MX[dtype_np(t)])


def _lower_unknown_params(heads: list[Entry], target: str, types: dict) -> None:
    """MXNet's AMPInferUnknown: a variable of unknown dtype read only by casts to one dtype
    (or by a multicast of variables alone) takes that dtype."""
    chosen: dict[int, str] = {}
    original = dict(types)
    for node in topo_order(heads):
        if node.is_variable:
            continue
        if node.op.name == "amp_cast":
            for e in node.inputs:
                if e.node.is_variable:
                    _choose(e.node, node.parsed.dtype, chosen, types, original)
        elif node.op.name == "amp_multicast":
            if all(e.node.is_variable for e in node.inputs):
                for e in node.inputs:
                    _choose(e.node, target, chosen, types, original)


def _choose(var: Node, dtype: str, chosen: dict, types: dict, original: dict) -> None:
    key = (id(var), 0)
    if id(var) not in chosen:
        if types.get(key) is None:
            chosen[id(var)] = dtype
            types[key] = dtype
    elif chosen[id(var)] != dtype:
        types[key] = original.get(key)

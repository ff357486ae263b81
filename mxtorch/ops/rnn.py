"""The fused RNN operator (rnn_relu, rnn_tanh, lstm, gru) with MXNet's packed parameter layout.

MXNet keeps every weight and bias of a (possibly multi-layer, bidirectional) RNN in one flat
``parameters`` vector. The compute slices that vector into the list of views torch's fused
kernels (``torch._VF.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu``) expect, so forward and
backward run as one fused torch call and gradients flow back into the flat vector.
"""
from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import _VF
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from ..base import MXNetError
from . import tuning
from .params import Bool, Enum, Float, Int, OptFloat, OptInt
from .registry import OpDef, register

__all__ = ["rnn_param_size"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_FUSED = {"rnn_relu": _VF.rnn_relu, "rnn_tanh": _VF.rnn_tanh, "lstm": _VF.lstm, "gru": _VF.gru}


def _dirs(attrs: Any) -> int:
    """Number of directions (1 or 2)."""
    return 2 if attrs.bidirectional else 1


def _out_size(attrs: Any) -> int:
    """Size of one direction's hidden output: the projection size when projecting."""
    return attrs.projection_size or attrs.state_size


def _layout(attrs: Any, input_size: int) -> tuple[list, list]:
    """Shapes of (weights, biases) in MXNet's flat order, one tuple of shapes per layer/dir.

    Weights of each layer/direction are ``W_i2h (G*H, in)``, ``W_h2h (G*H, P)`` and, with a
    projection, ``W_h2r (P, H)``; biases ``b_i2h (G*H,)``, ``b_h2h (G*H,)``.
    """
    gh = _GATES[attrs.mode] * attrs.state_size
    out = _out_size(attrs)
    weights, biases = [], []
    for layer in range(attrs.num_layers):
        in_size = input_size if layer == 0 else out * _dirs(attrs)
        for _ in range(_dirs(attrs)):
            w = [(gh, in_size), (gh, out)]
            if attrs.projection_size:
                w.append((out, attrs.state_size))
            weights.append(w)
            biases.append([(gh,), (gh,)])
    return weights, biases


def rnn_param_size(attrs: Any, input_size: int) -> int:
    """Total length of the flat ``parameters`` vector for an input feature size."""
    weights, biases = _layout(attrs, input_size)
    total = 0
    for group in weights + biases:
        for shape in group:
            n = 1
            for d in shape:
                n *= d
            total += n
    return total


def _split_params(attrs: Any, flat: torch.Tensor, input_size: int) -> list[torch.Tensor]:
    """Slice the flat vector into torch's per-layer/direction weight list (views)."""
    weights, biases = _layout(attrs, input_size)
    expected = rnn_param_size(attrs, input_size)
    if flat.dim() != 1 or flat.shape[0] != expected:
        raise MXNetError(f"Operator RNN: parameters must be a vector of {expected} elements "
                         f"for input size {input_size}, state_size {attrs.state_size}, "
                         f"{attrs.num_layers} layer(s), mode {attrs.mode}; got shape "
                         f"{tuple(flat.shape)}")
    views: list[list[torch.Tensor]] = []
    offset = 0
    for group in weights + biases:
        cur = []
        for shape in group:
            n = shape[0] * (shape[1] if len(shape) > 1 else 1)
            cur.append(flat[offset:offset + n].view(shape))
            offset += n
        views.append(cur)
    nw = len(weights)
    out: list[torch.Tensor] = []
    for k in range(nw):
        w = views[k]
        out.extend([w[0], w[1], views[nw + k][0], views[nw + k][1]])
        if attrs.projection_size:
            out.append(w[2])  # torch order: w_ih, w_hh, b_ih, b_hh, w_hr
    return out


def _check_state(attrs: Any, data: torch.Tensor, state: torch.Tensor, size: int,
                 what: str) -> None:
    """Raise MXNetError when a state tensor has the wrong shape."""
    want = (attrs.num_layers * _dirs(attrs), data.shape[1], size)
    if tuple(state.shape) != want:
        raise MXNetError(f"Operator RNN: {what} must have shape {want} (layers*directions, "
                         f"batch, size) for data {tuple(data.shape)}; got {tuple(state.shape)}")


def _fused(attrs: Any, data, hx, weights, dropout: float, train: bool):
    """One fused torch call over the whole padded sequence."""
    fn = _FUSED[attrs.mode]
    with warnings.catch_warnings():
        # Expected notes: oneDNN has no LSTMP kernel; cuDNN copies our sliced weights
        # (MXNet's layout is not cuDNN's) into its own buffer.
        warnings.filterwarnings("ignore", message="LSTM with projections")
        warnings.filterwarnings("ignore", message="RNN module weights are not part")
        return fn(data, hx, weights, True, attrs.num_layers, dropout, train,
                  attrs.bidirectional, False)


def _packed(attrs: Any, data, hx, weights, lengths, dropout: float, train: bool):
    """Variable-length sequences: pack, run the fused kernel, unpack (pads are zero)."""
    lens = lengths.detach().to("cpu", torch.int64)
    packed = pack_padded_sequence(data, lens, enforce_sorted=False)
    order, unorder = packed.sorted_indices, packed.unsorted_indices
    if isinstance(hx, tuple):
        hx = tuple(h.index_select(1, order.to(h.device)) for h in hx)
    else:
        hx = hx.index_select(1, order.to(hx.device))
    res = _FUSED[attrs.mode](packed.data, packed.batch_sizes, hx, weights, True,
                             attrs.num_layers, dropout, train, attrs.bidirectional)
    seq = PackedSequence(res[0], packed.batch_sizes, order, unorder)
    out, _ = pad_packed_sequence(seq, total_length=data.shape[0])
    states = [s.index_select(1, unorder.to(s.device)) for s in res[1:]]
    return (out, *states)


def _cell_step(mode: str, xw, h, c, w_hh, b_hh, w_hr, clip):
    """One time step of one layer/direction; ``xw`` is the precomputed input term."""
    hw = torch.nn.functional.linear(h, w_hh, b_hh)
    if mode == "lstm":
        i, f, g, o = (xw + hw).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        if clip is not None:
            c = _clip_cell(c, *clip)
        h = torch.sigmoid(o) * torch.tanh(c)
        if w_hr is not None:
            h = torch.nn.functional.linear(h, w_hr)
        return h, c
    if mode == "gru":
        xr, xz, xn = xw.chunk(3, dim=-1)
        hr, hz, hn = hw.chunk(3, dim=-1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h, c
    act = torch.relu if mode == "rnn_relu" else torch.tanh
    return act(xw + hw), c


def _clip_cell(c: torch.Tensor, lo: float, hi: float, stop_nan: bool) -> torch.Tensor:
    """cuDNN's cell clipping; with ``stop_nan`` a NaN becomes ``lo`` (fmax semantics)."""
    if stop_nan:
        c = torch.where(torch.isnan(c), torch.full_like(c, lo), c)
    return c.clamp(lo, hi)


def _run_direction(attrs, x, h, c, w, reverse: bool, mask, clip):
    """Run one layer in one direction over time with an explicit loop."""
    w_ih, w_hh, b_ih, b_hh = w[:4]
    w_hr = w[4] if len(w) > 4 else None
    xw = torch.nn.functional.linear(x, w_ih, b_ih)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outs: list = [None] * x.shape[0]
    for t in steps:
        h_new, c_new = _cell_step(attrs.mode, xw[t], h, c, w_hh, b_hh, w_hr, clip)
        if mask is not None:
            m = mask[t]
            outs[t] = h_new * m
            h = torch.where(m > 0, h_new, h)
            c = torch.where(m > 0, c_new, c) if c is not None else None
        else:
            outs[t], h, c = h_new, h_new, c_new
    return torch.stack(outs), h, c


def _looped(attrs: Any, data, hx, weights, lengths, dropout: float, train: bool):
    """Explicit recurrence (cell clipping needs it): same layout and results as fused."""
    h0, c0 = hx if isinstance(hx, tuple) else (hx, None)
    per = 5 if attrs.projection_size else 4
    clip = None
    if attrs.lstm_state_clip_min is not None and attrs.lstm_state_clip_max is not None:
        clip = (attrs.lstm_state_clip_min, attrs.lstm_state_clip_max, attrs.lstm_state_clip_nan)
    mask = None
    if lengths is not None:
        steps = torch.arange(data.shape[0], device=data.device).unsqueeze(1)
        mask = (steps < lengths.to(data.device).unsqueeze(0)).to(data.dtype).unsqueeze(-1)
    x, hs, cs = data, [], []
    for layer in range(attrs.num_layers):
        if layer > 0 and dropout > 0 and train:
            x = torch.nn.functional.dropout(x, dropout, True)
        outs = []
        for d in range(_dirs(attrs)):
            k = layer * _dirs(attrs) + d
            w = weights[k * per:(k + 1) * per]
            c = c0[k] if c0 is not None else None
            o, h, c = _run_direction(attrs, x, h0[k], c, w, d == 1, mask, clip)
            outs.append(o)
            hs.append(h)
            cs.append(c)
        x = torch.cat(outs, dim=-1) if len(outs) > 1 else outs[0]
    res = (x, torch.stack(hs))
    return res + (torch.stack(cs),) if c0 is not None else res


def _rnn_compute(attrs: Any, data, params, state, *rest, is_train: bool = False):
    """Forward of the fused RNN operator."""
    if data.dim() != 3:
        raise MXNetError(f"Operator RNN: data must be 3-D (seq_len, batch, input_size); got "
                         f"shape {tuple(data.shape)}")
    lstm = attrs.mode == "lstm"
    if attrs.projection_size and not lstm:
        raise MXNetError("Operator RNN: projection_size is only supported for mode='lstm'")
    _check_state(attrs, data, state, _out_size(attrs), "state")
    hx = state
    if lstm:
        if not rest:
            raise MXNetError("Operator RNN: mode 'lstm' needs the state_cell input")
        _check_state(attrs, data, rest[0], attrs.state_size, "state_cell")
        hx = (state, rest[0])
    # MXNet: 1.9.1's CPU kernel silently ignores sequence_length and the cell clipping;
    # we give everywhere the cuDNN (GPU) semantics that the parameters document.
    lengths = rest[-1] if attrs.use_sequence_length else None
    weights = _split_params(attrs, params, data.shape[2])
    dropout = attrs.p if is_train else 0.0
    clip = lstm and attrs.lstm_state_clip_min is not None \
        and attrs.lstm_state_clip_max is not None
    if clip or (lengths is not None and data.device.type == "meta"):
        res = _looped(attrs, data, hx, weights, lengths, dropout, is_train)
    elif lengths is not None:
        res = _packed(attrs, data, hx, weights, lengths, dropout, is_train)
    else:
        res = _fused(attrs, data, hx, weights, dropout, is_train)
    return tuple(res) if attrs.state_outputs else res[0]


def _rnn_inputs(attrs: Any) -> list[str]:
    names = ["data", "parameters", "state"]
    if attrs.mode == "lstm":
        names.append("state_cell")
    if attrs.use_sequence_length:
        names.append("sequence_length")
    return names


def _rnn_num_outputs(attrs: Any) -> int:
    if not attrs.state_outputs:
        return 1
    return 3 if attrs.mode == "lstm" else 2


def _rnn_output_names(attrs: Any) -> list[str]:
    return ["output", "state_output", "statecell_output"][:_rnn_num_outputs(attrs)]


def _rnn_infer_shape(attrs: Any, shapes: list):
    """Fill parameters/state/state_cell/sequence_length from data; outputs from data."""
    data = shapes[0]
    if data is None or len(data) != 3 or 0 in data:
        return shapes, None
    t, n, c = data
    ld = attrs.num_layers * _dirs(attrs)
    out = _out_size(attrs)
    fill = [data, (rnn_param_size(attrs, c),), (ld, n, out)]
    if attrs.mode == "lstm":
        fill.append((ld, n, attrs.state_size))
    if attrs.use_sequence_length:
        fill.append((n,))
    new = [s if s is not None and 0 not in s else f for s, f in zip(shapes, fill)]
    outs = [(t, n, _dirs(attrs) * out), (ld, n, out), (ld, n, attrs.state_size)]
    return new, outs[:_rnn_num_outputs(attrs)]


def _rnn_infer_type(attrs: Any, types: list):
    """Every float input and output has data's dtype; sequence_length keeps its own."""
    dt = types[0] or next((t for t in types if t is not None), None)
    seq_idx = len(_rnn_inputs(attrs)) - 1 if attrs.use_sequence_length else -1
    new = [t if (i == seq_idx and t is not None) else dt for i, t in enumerate(types)]
    return new, [dt] * _rnn_num_outputs(attrs)


register(OpDef(
    "RNN", _rnn_compute, work=tuning.rnn, deterministic=False,   # MXNet: stateful
    params=[Int("state_size"), Int("num_layers"), Bool("bidirectional", False),
            Enum("mode", ("gru", "lstm", "rnn_relu", "rnn_tanh")),
            Float("p", 0.0, "Dropout rate between layers", 0.0, 1.0),
            Bool("state_outputs", False), OptInt("projection_size", None),
            OptFloat("lstm_state_clip_min", None), OptFloat("lstm_state_clip_max", None),
            Bool("lstm_state_clip_nan", False), Bool("use_sequence_length", False)],
    inputs=_rnn_inputs, num_outputs=_rnn_num_outputs, output_names=_rnn_output_names,
    infer_shape=_rnn_infer_shape, infer_type=_rnn_infer_type, train_aware=True,
    doc="""Apply a recurrent layer (vanilla RNN with relu/tanh, LSTM or GRU) over a sequence.

Parameters
----------
data : NDArray
    Input of shape (seq_len, batch, input_size).
parameters : NDArray
    All weights then all biases, flattened: for each layer, for each direction,
    ``W_i2h (G*H, in)``, ``W_h2h (G*H, H)``; then ``b_i2h``, ``b_h2h`` in the same order.
    Gate order LSTM i, f, g, o; GRU r, z, n. With ``projection_size`` P each
    layer/direction has ``W_i2h (4H, in)``, ``W_h2h (4H, P)``, ``W_h2r (P, H)``.
state : NDArray
    Initial hidden state (num_layers*directions, batch, H).
state_cell : NDArray
    Initial cell state (LSTM only).
sequence_length : NDArray
    Valid length of each sequence (only with ``use_sequence_length=True``).
state_size : int
    Hidden size H.
num_layers : int
    Number of stacked layers.
bidirectional : bool, default False
mode : {'gru', 'lstm', 'rnn_relu', 'rnn_tanh'}
p : float, default 0
    Dropout on the outputs of every layer but the last, in training.
state_outputs : bool, default False
    Also return the final states.
projection_size : int or None
    LSTM projection size (LSTMP).
lstm_state_clip_min, lstm_state_clip_max : float or None
    Clip the LSTM cell state to this range at every step.
lstm_state_clip_nan : bool, default False
    With clipping, turn NaN cell states into ``lstm_state_clip_min``.
use_sequence_length : bool, default False
    Take the extra ``sequence_length`` input; steps past a sequence's length output zeros.
"""))


# ---------------------------------------------------------------- _rnn_param_concat
def _param_concat_compute(attrs: Any, *tensors: torch.Tensor) -> torch.Tensor:
    """Concatenate the (flattened) RNN weights into the fused ``parameters`` vector."""
    return torch.cat(tensors, dim=attrs.dim)


register(OpDef(
    "_rnn_param_concat", _param_concat_compute,
    params=[Int("num_args"), Int("dim", 1)],
    inputs=lambda a: [f"arg{i}" for i in range(a.num_args)], key_var_num_args="num_args",
    doc="Concatenate RNN parameters (what Gluon's fused RNN layers export)."))

"""Fused recurrent layers of Gluon (``mx.gluon.rnn.RNN``, ``LSTM``, ``GRU``).

Each layer keeps one Parameter per layer, direction and matrix (``l0_i2h_weight``,
``r1_h2h_bias``, ...) and, in ``hybrid_forward``, flattens and concatenates them with
``_rnn_param_concat`` into the single ``parameters`` vector of the fused ``RNN`` operator,
exactly as MXNet 1.9.1 does, so exported symbol JSON matches MXNet's node for node.
"""
import re

from ... import ndarray, symbol
from ...ndarray import NDArray
from ...symbol import Symbol
from ..hybrid import HybridBlock
from . import rnn_cell

__all__ = ['RNN', 'LSTM', 'GRU']

_GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}
_PARAM_KEY = re.compile(r'(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z')


def _unfused_key(key: str, bidirectional: bool) -> str:
    """Structural name MXNet saves a fused parameter under (``_unfused.0.i2h_weight``)."""
    d, layer, group, kind = _PARAM_KEY.match(key).groups()
    if bidirectional:
        return '_unfused.{}.{}_cell.{}_{}'.format(layer, d, group, kind)
    return '_unfused.{}.{}_{}'.format(layer, group, kind)


class _RNNLayer(HybridBlock):
    """Implementation of recurrent layers."""

    def __init__(self, hidden_size, num_layers, layout,
                 dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer,
                 mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan,
                 dtype, use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        assert layout in ('TNC', 'NTC'), \
            "Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]
        self._register_all_params()

    def _register_all_params(self) -> None:
        """Create ``{l,r}{layer}_{i2h,h2h[,h2r]}_{weight,bias}`` in MXNet's order."""
        ng, ni, nh = self._gates, self._input_size, self._hidden_size
        npj = self._projection_size
        for i in range(self._num_layers):
            for j in ['l', 'r'][:self._dir]:
                self._register_param('{}{}_i2h_weight'.format(j, i), (ng * nh, ni),
                                     self._i2h_weight_initializer)
                self._register_param('{}{}_h2h_weight'.format(j, i), (ng * nh, npj or nh),
                                     self._h2h_weight_initializer)
                self._register_param('{}{}_i2h_bias'.format(j, i), (ng * nh,),
                                     self._i2h_bias_initializer)
                self._register_param('{}{}_h2h_bias'.format(j, i), (ng * nh,),
                                     self._h2h_bias_initializer)
                if npj:
                    self._register_param('{}{}_h2r_weight'.format(j, i), (npj, nh),
                                         self._h2r_weight_initializer)
            ni = (npj or nh) * self._dir

    def _register_param(self, name, shape, init):
        """Create one deferred Parameter and expose it as an attribute."""
        p = self.params.get(name, shape=shape, init=init,
                            allow_deferred_init=True, dtype=self._dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = '{name}({mapping}, {_layout}'
        if self._num_layers != 1:
            s += ', num_layers={_num_layers}'
        if self._dropout != 0:
            s += ', dropout={_dropout}'
        if self._dir == 2:
            s += ', bidirectional'
        s += ')'
        shape = self.l0_i2h_weight.shape
        mapping = '{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0] // self._gates)
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    def _collect_params_with_prefix(self, prefix=''):
        # MXNet: fused parameters are saved under the unfused cell stack's structural names
        if prefix:
            prefix += '.'
        bidirectional = any(_PARAM_KEY.match(k).group(1) == 'r' for k in self._reg_params)
        ret = {prefix + _unfused_key(key, bidirectional): val
               for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """Unfuses the fused RNN in to a stack of rnn cells."""
        assert not self._projection_size, "_unfuse does not support projection layer yet!"
        assert not self._lstm_state_clip_min and not self._lstm_state_clip_max, \
            "_unfuse does not support state clipping yet!"
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {'input_size': ni,
                          'i2h_weight_initializer': self._i2h_weight_initializer,
                          'h2h_weight_initializer': self._h2h_weight_initializer,
                          'i2h_bias_initializer': self._i2h_bias_initializer,
                          'h2h_bias_initializer': self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(
                        self._make_cell(prefix='l%d_' % i, **kwargs),
                        self._make_cell(prefix='r%d_' % i, **kwargs)))
                else:
                    stack.add(self._make_cell(prefix='l%d_' % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def _make_cell(self, **kwargs):
        """One unfused cell of this layer's mode."""
        if self._mode == 'lstm':
            return rnn_cell.LSTMCell(self._hidden_size, **kwargs)
        if self._mode == 'gru':
            return rnn_cell.GRUCell(self._hidden_size, **kwargs)
        return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:], **kwargs)

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """Initial state for this cell.

        Parameters
        ----------
        batch_size: int
            Only required for `NDArray` API. Size of the batch ('N' in layout).
        func : callable, default `ndarray.zeros`
            Function for creating initial state (``symbol.zeros``, ``symbol.var``,
            ``ndarray.ones`` ...).
        **kwargs :
            Additional keyword arguments passed to func. For example
            `mean`, `std`, `dtype`, etc.

        Returns
        -------
        states : nested list of Symbol
            Starting states for the first RNN step.
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            if info is not None:
                info.update(kwargs)
            else:
                info = kwargs
            states.append(func(name='%sh0_%d' % (self.prefix, i), **info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find('N')]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, (NDArray, Symbol)):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def infer_shape(self, inputs, *args):
        """Infers the input width of the first layer's ``i2h_weight`` from ``inputs``."""
        # MXNet: done by _rnn_param_concat's backward shape inference; here directly
        width = inputs.shape[self._layout.find('C')]
        for d in ['l', 'r'][:self._dir]:
            param = getattr(self, '%s0_i2h_weight' % d)
            param.shape = (param.shape[0], width)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find('N')]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info['shape']:
                    raise ValueError(
                        "Invalid recurrent state shape. Expecting %s, got %s." % (
                            str(info['shape']), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _flat_params(self, kwargs):
        """Parameters flattened in the fused operator's order (weights, then biases)."""
        groups = ['i2h', 'h2h', 'h2r'] if self._projection_size else ['i2h', 'h2h']
        return [kwargs['{}{}_{}_{}'.format(d, layer, g, t)].reshape(-1)
                for t in ['weight', 'bias']
                for layer in range(self._num_layers)
                for d in ['l', 'r'][:self._dir]
                for g in groups
                if g != 'h2r' or t != 'bias']

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """Forward through the fused ``RNN`` operator."""
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, 0, 1)
        params = F._internal._rnn_param_concat(*self._flat_params(kwargs), dim=0)
        rnn_args = states + [sequence_length] if self._use_sequence_length else states
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == 'lstm':
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states

    def _state_shape(self, batch_size, size):
        """One state_info entry of shape (layers*dirs, batch, size)."""
        return {'shape': (self._num_layers * self._dir, batch_size, size),
                '__layout__': 'LNC', 'dtype': self._dtype}


class RNN(_RNNLayer):
    r"""Applies a multi-layer Elman RNN with `tanh` or `ReLU` non-linearity to an input sequence.

    ``h_t = act(w_ih * x_t + b_ih + w_hh * h_(t-1) + b_hh)`` for each layer.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h.
    num_layers: int, default 1
        Number of recurrent layers.
    activation: {'relu' or 'tanh'}, default 'relu'
        The activation function to use.
    layout : str, default 'TNC'
        The format of input and output tensors. T, N and C stand for
        sequence length, batch size, and feature dimensions respectively.
    dropout: float, default 0
        If non-zero, introduces a dropout layer on the outputs of each
        RNN layer except the last layer.
    bidirectional: bool, default False
        If `True`, becomes a bidirectional RNN.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer
        Initializers for the bias vectors.
    input_size: int, default 0
        The number of expected features in the input x (0: inferred from input).
    dtype : str, default 'float32'
        Type to initialize the parameters and default states to.
    prefix : str or None
        Prefix of this `Block`.
    params : ParameterDict or None
        Shared Parameters for this `Block`.

    Inputs: ``data`` (T, N, C) for layout TNC and optional ``states``
    (num_layers*dirs, N, hidden). Outputs: ``out`` and, when states were given, ``out_states``.
    """

    def __init__(self, hidden_size, num_layers=1, activation='relu',
                 layout='TNC', dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 input_size=0, dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout,
                         dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         'rnn_' + activation, None, None, None, None, False,
                         dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [self._state_shape(batch_size, self._hidden_size)]


class LSTM(_RNNLayer):
    r"""Applies a multi-layer long short-term memory (LSTM) RNN to an input sequence.

    Gates i, f, g, o (in this order in the weights); ``c_t = f*c_(t-1) + i*g``,
    ``h_t = o*tanh(c_t)``.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h.
    num_layers: int, default 1
        Number of recurrent layers.
    layout : str, default 'TNC'
        The format of input and output tensors.
    dropout: float, default 0
        If non-zero, introduces a dropout layer on the outputs of each
        RNN layer except the last layer.
    bidirectional: bool, default False
        If `True`, becomes a bidirectional RNN.
    input_size: int, default 0
        The number of expected features in the input x (0: inferred from input).
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        Initializers for the bias vectors.
    projection_size: int, default None
        The number of features after projection.
    h2r_weight_initializer : str or Initializer, default None
        Initializer for the projection weights.
    state_clip_min, state_clip_max : float or None, default None
        Clip range of the LSTM cell states (both or none).
    state_clip_nan : boolean, default False
        Whether to stop NaN from propagating in state by clipping it to min/max.
    dtype : str, default 'float32'
        Type to initialize the parameters and default states to.
    prefix : str or None
        Prefix of this `Block`.
    params : `ParameterDict` or `None`
        Shared Parameters for this `Block`.

    Inputs: ``data`` and optional ``states`` ``[h0, c0]``. Outputs: ``out`` and, when
    states were given, ``[hn, cn]``.
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC',
                 dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False,
                 dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout,
                         dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         'lstm', projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan,
                         dtype, **kwargs)

    def state_info(self, batch_size=0):
        h_size = self._projection_size or self._hidden_size
        return [self._state_shape(batch_size, h_size),
                self._state_shape(batch_size, self._hidden_size)]


class GRU(_RNNLayer):
    r"""Applies a multi-layer gated recurrent unit (GRU) RNN to an input sequence.

    cuDNN variant: gates r, z, n; ``n_t = tanh(W_in x + b_in + r*(W_hn h + b_hn))``,
    ``h_t = (1-z)*n_t + z*h_(t-1)``.

    Parameters
    ----------
    hidden_size: int
        The number of features in the hidden state h
    num_layers: int, default 1
        Number of recurrent layers.
    layout : str, default 'TNC'
        The format of input and output tensors.
    dropout: float, default 0
        If non-zero, introduces a dropout layer on the outputs of each
        RNN layer except the last layer
    bidirectional: bool, default False
        If True, becomes a bidirectional RNN.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
        Initializers for the input and recurrent weight matrices.
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer
        Initializers for the bias vectors.
    dtype : str, default 'float32'
        Type to initialize the parameters and default states to.
    input_size: int, default 0
        The number of expected features in the input x (0: inferred from input).
    prefix : str or None
        Prefix of this `Block`.
    params : ParameterDict or None
        Shared Parameters for this `Block`.
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC',
                 dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout,
                         dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         'gru', None, None, None, None, False,
                         dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [self._state_shape(batch_size, self._hidden_size)]

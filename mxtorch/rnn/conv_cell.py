"""Convolutional recurrent cells of the legacy ``mx.rnn`` API: ConvRNN, ConvLSTM, ConvGRU.

Each step is an ``i2h`` Convolution of the input plus an ``h2h`` Convolution of the
previous hidden state (padded so it keeps the state's spatial size), followed by the
cell's gates. The states have the shape of the ``i2h`` convolution's output with an
unknown (0) batch size, so ``begin_state`` and ``unroll`` work as for the dense cells.
"""
import functools

from .. import symbol
from .rnn_cell import BaseRNNCell

__all__ = ['BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell']


# MXNet's default activation is this partial of symbol.LeakyReLU
_DEFAULT_ACTIVATION = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Base class of the convolutional RNN cells: the two convolutions of a step.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one time step's input, batch axis included (e.g. ``(1, 3, 16, 10)``).
    num_hidden : int
        Number of channels of the hidden state.
    h2h_kernel, h2h_dilate : tuple of int
        Kernel (odd sizes only) and dilation of the state-to-state convolution; its padding
        keeps the state's spatial size.
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        The input-to-state convolution; its output shape is the state shape.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer
    activation : str or callable
        An ``Activation`` act_type, or a function ``f(symbol, name=...)``.
    prefix : str
        Prefix of the node and parameter names.
    params : RNNParams, optional
        Shared parameters (a new container when None).
    conv_layout : str, default 'NCHW'
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                 i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix='', params=None, conv_layout='NCHW'):
        super().__init__(prefix=prefix, params=params)
        if any(k % 2 == 0 for k in h2h_kernel):
            raise AssertionError("Only support odd number, get h2h_kernel= %s"
                                 % str(h2h_kernel))
        self._h2h_kernel = h2h_kernel
        self._h2h_dilate = h2h_dilate
        self._h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(h2h_kernel, h2h_dilate))
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        conv = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden,
                                  kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                  dilate=i2h_dilate, layout=conv_layout)
        out_shape = conv.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0,) + tuple(out_shape[1:])
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        info = {'shape': self._state_shape, '__layout__': self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 1

    def _conv_forward(self, inputs, states, name):
        """The step's i2h and h2h convolutions, each with num_hidden * num_gates filters."""
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs, num_filter=filters,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0], num_filter=filters,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


def _with_defaults(default_prefix):
    """Class decorator: the concrete cells' constructor, with MXNet's defaults."""
    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),  # noqa: N807 - becomes the class's __init__
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_DEFAULT_ACTIVATION, prefix=default_prefix, params=None,
                 conv_layout='NCHW'):
        BaseConvRNNCell.__init__(
            self, input_shape=input_shape, num_hidden=num_hidden, h2h_kernel=h2h_kernel,
            h2h_dilate=h2h_dilate, i2h_kernel=i2h_kernel, i2h_stride=i2h_stride,
            i2h_pad=i2h_pad, i2h_dilate=i2h_dilate,
            i2h_weight_initializer=i2h_weight_initializer,
            h2h_weight_initializer=h2h_weight_initializer,
            i2h_bias_initializer=i2h_bias_initializer,
            h2h_bias_initializer=h2h_bias_initializer, activation=activation, prefix=prefix,
            params=params, conv_layout=conv_layout)

    def decorate(cls):
        cls.__init__ = __init__
        return cls
    return decorate


_CELL_DOC = """

    Parameters are those of :class:`BaseConvRNNCell`; the defaults are 3x3 kernels, stride 1,
    padding 1, dilation 1, zero biases, LeakyReLU(slope 0.2) and the prefix ``'{}'``.
    """


@_with_defaults('ConvRNN_')
class ConvRNNCell(BaseConvRNNCell):
    """Convolutional RNN cell: ``h' = activation(i2h(x) + h2h(h))``.""" + \
        _CELL_DOC.format('ConvRNN_')

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


@_with_defaults('ConvLSTM_')
class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Shi et al., NIPS 2015); states ``[h, c]``.""" + \
        _CELL_DOC.format('ConvLSTM_')

    _num_states = 2

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find('C'), name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        in_transform = self._get_activation(gates[2], self._activation, name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


@_with_defaults('ConvGRU_')
class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell; state ``[h]``.""" + _CELL_DOC.format('ConvGRU_')

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        # MXNet: the gates are split on axis 1 whatever conv_layout says
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid',
                                       name='%s_r_act' % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid',
                                        name='%s_z_act' % name)
        candidate = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                         name='%s_h_act' % name)
        next_h = symbol._internal._plus((1. - update_gate) * candidate,
                                        update_gate * states[0], name='%sout' % name)
        return next_h, [next_h]

"""Convolutional, pooling and padding layers, as in MXNet 1.9.1's
``gluon.nn.conv_layers``."""
from __future__ import annotations

from ... import symbol
from ...base import numeric_types
from ..block import HybridBlock
from .activations import Activation

__all__ = ['Conv1D', 'Conv2D', 'Conv3D',
           'Conv1DTranspose', 'Conv2DTranspose', 'Conv3DTranspose',
           'MaxPool1D', 'MaxPool2D', 'MaxPool3D',
           'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D',
           'ReflectionPad2D']

_CONV_LAYOUTS = {1: ('NCW',), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}
_POOL_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


def _tuple(value, ndim: int) -> tuple:
    """A number repeated `ndim` times, or the given sequence unchanged."""
    if isinstance(value, numeric_types):
        return (value,) * ndim
    return value


def _infer_weight_shape(op_name: str, data_shape: list, kwargs: dict) -> list:
    """Argument shapes of `op_name` on data of `data_shape` (0 = unknown)."""
    data = symbol.var('data', shape=tuple(data_shape))
    out = getattr(symbol, op_name)(data, **kwargs)
    return out.infer_shape_partial()[0]


def _check_conv_layout(layout: str, ndim: int) -> None:
    """Assert MXNet's message for a convolution layout it does not support."""
    allowed = _CONV_LAYOUTS[ndim]
    if ndim == 1:
        assert layout in allowed, "Only supports 'NCW' layout for now"
    else:
        assert layout in allowed, "Only supports %s layout for now" % \
            ' and '.join("'%s'" % lay for lay in allowed)


def _check_pool_layout(layout: str, ndim: int) -> None:
    """Assert MXNet's message for a pooling layout it does not support."""
    first, second = _POOL_LAYOUTS[ndim]
    assert layout in (first, second), \
        "Only %s and %s layouts are valid for %dD Pooling" % (first, second, ndim)


def _sized(value, ndim: int, what: str) -> tuple:
    """`value` as an `ndim`-tuple, asserting its length as MXNet does."""
    value = _tuple(value, ndim)
    assert len(value) == ndim, "%s must be a number or a list of %d ints" % (what, ndim)
    return value


class _Conv(HybridBlock):
    """Abstract nD convolution layer (private, used as implementation base).

    The weight shape is inferred from the operator's own shape inference, as MXNet
    does, so deferred initialization fills the unknown input channels later.
    """

    def __init__(self, channels, kernel_size, strides, padding, dilation,
                 groups, layout, in_channels=0, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 op_name='Convolution', adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            ndim = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {
                'kernel': kernel_size, 'stride': _tuple(strides, ndim),
                'dilate': _tuple(dilation, ndim), 'pad': _tuple(padding, ndim),
                'num_filter': channels, 'num_group': groups,
                'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            dshape = [0] * (ndim + 2)
            dshape[layout.find('N')] = 1
            dshape[layout.find('C')] = in_channels
            wshapes = _infer_weight_shape(op_name, dshape, self._kwargs)
            self.weight = self.params.get('weight', shape=wshapes[1],
                                          init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = None
            if use_bias:
                self.bias = self.params.get('bias', shape=wshapes[2],
                                            init=bias_initializer,
                                            allow_deferred_init=True)
            self.act = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + '_')

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        """Prefix hint: every convolution is named ``convN_``."""
        return 'conv'

    def __repr__(self):
        kw = self._kwargs
        ndim = len(kw['kernel'])
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        if kw['pad'] != (0,) * ndim:
            s += ', padding={pad}'
        if kw['dilate'] != (1,) * ndim:
            s += ', dilation={dilate}'
        # MXNet: looks for ``out_pad`` while the transposed layers store ``outpad``,
        # so output_padding never shows.
        if hasattr(self, 'out_pad') and self.out_pad != (0,) * ndim:
            s += ', output_padding={}'.format(self.out_pad)
        if kw['num_group'] != 1:
            s += ', groups={num_group}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += ', {}'.format(self.act)
        s += ')'
        shape = self.weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]),
                        **kw)


def _conv_init(self, ndim, channels, kernel_size, strides, padding, dilation, groups,
               layout, activation, use_bias, weight_initializer, bias_initializer,
               in_channels, kwargs, output_padding=None):
    """Validate and forward the arguments of a ConvND / ConvNDTranspose constructor."""
    _check_conv_layout(layout, ndim)
    kernel_size = _tuple(kernel_size, ndim)
    if output_padding is not None:
        output_padding = _tuple(output_padding, ndim)
    assert len(kernel_size) == ndim, \
        "kernel_size must be a number or a list of %d ints" % ndim
    if output_padding is not None:
        assert len(output_padding) == ndim, \
            "output_padding must be a number or a list of %d ints" % ndim
    default_op = 'Convolution' if output_padding is None else 'Deconvolution'
    op_name = kwargs.pop('op_name', default_op)
    _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                   in_channels, activation, use_bias, weight_initializer, bias_initializer,
                   op_name=op_name, adj=output_padding, **kwargs)
    if output_padding is not None:
        self.outpad = output_padding


class Conv1D(_Conv):
    r"""1D convolution layer (e.g. temporal convolution).

    Parameters
    ----------
    channels : int
        The dimensionality of the output space, i.e. the number of output channels.
    kernel_size :int or tuple/list of 1 int
        Specifies the dimensions of the convolution window.
    strides : int or tuple/list of 1 int
        Specify the strides of the convolution.
    padding : int or a tuple/list of 1 int
        Zero-padding added to both sides of the input.
    dilation : int or tuple/list of 1 int
        Specifies the dilation rate to use for dilated convolution.
    groups : int
        Controls the connections between inputs and outputs.
    layout: str, default 'NCW'
        Dimension ordering of data and weight. Only 'NCW' is supported.
    activation : str
        Activation function to use; None means none.
    use_bias : bool
        Whether the layer uses a bias vector.
    weight_initializer, bias_initializer : str or `Initializer`
        Initializers of the weight and the bias.
    in_channels : int, default 0
        The number of input channels; 0 infers it from the first input.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1,
                 groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        _conv_init(self, 1, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs)


class Conv2D(_Conv):
    r"""2D convolution layer (e.g. spatial convolution over images).

    Parameters are those of :class:`Conv1D` with 2-tuples; `layout` is 'NCHW' (default)
    or 'NHWC'.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 2, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs)


class Conv3D(_Conv):
    """3D convolution layer (e.g. spatial convolution over volumes).

    Parameters are those of :class:`Conv1D` with 3-tuples; `layout` is 'NCDHW'
    (default) or 'NDHWC'.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        _conv_init(self, 3, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs)


class Conv1DTranspose(_Conv):
    """Transposed 1D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv1D` plus `output_padding` (int or 1-tuple),
    added to one side of the output.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        _conv_init(self, 1, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs, output_padding=output_padding)


class Conv2DTranspose(_Conv):
    """Transposed 2D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv2D` plus `output_padding` (int or 2-tuple).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 2, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs, output_padding=output_padding)


class Conv3DTranspose(_Conv):
    """Transposed 3D convolution layer (sometimes called Deconvolution).

    Parameters are those of :class:`Conv3D` plus `output_padding` (int or 3-tuple).
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 3, channels, kernel_size, strides, padding, dilation, groups,
                   layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, kwargs, output_padding=output_padding)


class _Pooling(HybridBlock):
    """Abstract class for different pooling layers."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool,
                 pool_type, layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        ndim = len(pool_size)
        self._kwargs = {
            'kernel': pool_size, 'stride': _tuple(strides, ndim),
            'pad': _tuple(padding, ndim), 'global_pool': global_pool,
            'pool_type': pool_type, 'layout': layout,
            'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        """Prefix hint: every pooling layer is named ``poolN_``."""
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        s = '{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}'
        s += ', global_pool={global_pool}, pool_type={pool_type}, layout={layout})'
        return s.format(name=self.__class__.__name__,
                        ceil_mode=self._kwargs['pooling_convention'] == 'full',
                        **self._kwargs)


def _pool_init(self, ndim, pool_size, strides, padding, ceil_mode, pool_type, layout,
               count_include_pad, kwargs):
    """Validate and forward the arguments of a MaxPoolND / AvgPoolND constructor."""
    _check_pool_layout(layout, ndim)
    pool_size = _sized(pool_size, ndim, 'pool_size')
    _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, pool_type,
                      layout, count_include_pad, **kwargs)


class MaxPool1D(_Pooling):
    """Max pooling operation for one dimensional data.

    Parameters
    ----------
    pool_size: int
        Size of the max pooling windows.
    strides: int, or None
        Factor by which to downscale. If None, it will default to `pool_size`.
    padding: int
        If padding is non-zero, then the input is implicitly zero-padded on both sides.
    layout : str, default 'NCW'
        Dimension ordering of data and out ('NCW' or 'NWC').
    ceil_mode : bool, default False
        When True, use ceil instead of floor to compute the output shape ('full').
    """

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW',
                 ceil_mode=False, **kwargs):
        _pool_init(self, 1, pool_size, strides, padding, ceil_mode, 'max', layout, None,
                   kwargs)


class MaxPool2D(_Pooling):
    """Max pooling operation for two dimensional (spatial) data; layout 'NCHW' or 'NHWC'."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        _pool_init(self, 2, pool_size, strides, padding, ceil_mode, 'max', layout, None,
                   kwargs)


class MaxPool3D(_Pooling):
    """Max pooling operation for 3D data; layout 'NCDHW' or 'NDHWC'."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCDHW', **kwargs):
        _pool_init(self, 3, pool_size, strides, padding, ceil_mode, 'max', layout, None,
                   kwargs)


class AvgPool1D(_Pooling):
    """Average pooling operation for temporal data.

    `count_include_pad` (default True): when True, the padded zeros are counted in
    each window's average.
    """

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW',
                 ceil_mode=False, count_include_pad=True, **kwargs):
        _pool_init(self, 1, pool_size, strides, padding, ceil_mode, 'avg', layout,
                   count_include_pad, kwargs)


class AvgPool2D(_Pooling):
    """Average pooling operation for spatial data; layout 'NCHW' or 'NHWC'."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCHW', count_include_pad=True, **kwargs):
        _pool_init(self, 2, pool_size, strides, padding, ceil_mode, 'avg', layout,
                   count_include_pad, kwargs)


class AvgPool3D(_Pooling):
    """Average pooling operation for 3D data; layout 'NCDHW' or 'NDHWC'."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCDHW', count_include_pad=True, **kwargs):
        _pool_init(self, 3, pool_size, strides, padding, ceil_mode, 'avg', layout,
                   count_include_pad, kwargs)


def _global_pool_init(self, ndim, pool_type, layout, kwargs):
    """Forward the arguments of a Global{Max,Avg}PoolND constructor."""
    _check_pool_layout(layout, ndim)
    _Pooling.__init__(self, (1,) * ndim, None, 0, True, True, pool_type, layout, **kwargs)


class GlobalMaxPool1D(_Pooling):
    """Global max pooling operation for one dimensional (temporal) data."""

    def __init__(self, layout='NCW', **kwargs):
        _global_pool_init(self, 1, 'max', layout, kwargs)


class GlobalMaxPool2D(_Pooling):
    """Global max pooling operation for two dimensional (spatial) data."""

    def __init__(self, layout='NCHW', **kwargs):
        _global_pool_init(self, 2, 'max', layout, kwargs)


class GlobalMaxPool3D(_Pooling):
    """Global max pooling operation for 3D data."""

    def __init__(self, layout='NCDHW', **kwargs):
        _global_pool_init(self, 3, 'max', layout, kwargs)


class GlobalAvgPool1D(_Pooling):
    """Global average pooling operation for temporal data."""

    def __init__(self, layout='NCW', **kwargs):
        _global_pool_init(self, 1, 'avg', layout, kwargs)


class GlobalAvgPool2D(_Pooling):
    """Global average pooling operation for spatial data."""

    def __init__(self, layout='NCHW', **kwargs):
        _global_pool_init(self, 2, 'avg', layout, kwargs)


class GlobalAvgPool3D(_Pooling):
    """Global average pooling operation for 3D data."""

    def __init__(self, layout='NCDHW', **kwargs):
        _global_pool_init(self, 3, 'avg', layout, kwargs)


class ReflectionPad2D(HybridBlock):
    r"""Pads the input tensor using the reflection of the input boundary.

    Parameters
    ----------
    padding: int or tuple of 8 ints
        An integer pads the two spatial axes of an NCHW input by that amount on
        each side; a tuple is MXNet's ``pad_width`` (two entries per axis).
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)

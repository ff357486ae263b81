"""Weight initializers (``mx.init`` / ``mx.initializer``), as in MXNet 1.9.1."""
from __future__ import annotations

import json
import logging
import re
import warnings
from math import sqrt
from typing import Callable

import numpy as np

from . import ndarray
from . import registry
from .ndarray import NDArray

_LOG = logging.getLogger(__name__)

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias", "FusedRNN"]


# ---------------------------------------------------------------------------- descriptors
class InitDesc(str):
    """Descriptor for the initialization pattern.

    Parameters
    ----------
    name : str
        Name of variable.
    attrs : dict of str to str
        Attributes of this variable taken from ``Symbol.attr_dict``.
    global_init : Initializer
        Global initializer to fallback to.
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _norm_stat(x: NDArray) -> str:
    """Default verbose statistic: ``norm(x) / sqrt(size)``."""
    return str(float(np.linalg.norm(x.asnumpy().astype(np.float64).ravel())) / sqrt(x.size))


# Suffix -> (method name, label used in the verbose log), checked in order (MXNet's order).
_DESC_DISPATCH = (("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"),
                  ("beta", "_init_beta"), ("min", "_init_zero"), ("max", "_init_one"),
                  ("weight_quantize", "_init_quantized_weight"),
                  ("bias_quantize", "_init_quantized_bias"))

_LEGACY_SUFFIX = (("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"),
                  ("weight", "_init_weight"), ("moving_mean", "_init_zero"),
                  ("moving_var", "_init_one"), ("moving_inv_var", "_init_zero"),
                  ("moving_avg", "_init_zero"), ("min", "_init_zero"), ("max", "_init_one"))


class Initializer:
    """The base class of an initializer."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable | None = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Switch on/off verbose mode.

        Parameters
        ----------
        verbose : bool
            switch on/off verbose mode
        print_func : function
            A function that computes statistics of initialized arrays. Takes an `NDArray`
            and returns an `str`. Defaults to ``norm(x)/sqrt(size(x))``.
        """
        self._verbose = verbose
        self._print_func = print_func if print_func is not None else _norm_stat
        return self

    def _verbose_print(self, desc, init, arr) -> None:
        """Log one initialized array when verbose."""
        if self._verbose and self._print_func:
            _LOG.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """Save the initializer to a JSON string, e.g. ``'["normal", {"sigma": 0.5}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Initialize an array.

        Parameters
        ----------
        desc : InitDesc
            Initialization pattern descriptor.
        arr : NDArray
            The array to be initialized.
        """
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _DESC_DISPATCH:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr) -> None:
        """Legacy initialization: ``init(str, NDArray)``."""
        warnings.warn("\033[91mCalling initializer with init(str, NDArray) has been deprecated."
                      "please use init(mx.init.InitDesc(...), NDArray) instead.\033[0m",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if not isinstance(arr, NDArray):
            raise TypeError("arr must be NDArray")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        else:
            for suffix, method in _LEGACY_SUFFIX:
                if name.endswith(suffix):
                    getattr(self, method)(name, arr)
                    return
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr) -> None:
        """Fill with a bilinear upsampling kernel."""
        arr[:] = _bilinear_kernel(arr.shape)

    def _init_loc_bias(self, _, arr) -> None:
        """Identity affine transform for a spatial-transformer localisation bias."""
        assert arr.shape[0] == 6
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr) -> None:
        """Fill with 0."""
        arr[:] = 0.0

    def _init_one(self, _, arr) -> None:
        """Fill with 1."""
        arr[:] = 1.0

    def _init_bias(self, _, arr) -> None:
        """Biases default to 0."""
        arr[:] = 0.0

    def _init_quantized_bias(self, _, arr) -> None:
        """Quantized biases default to 0."""
        arr[:] = 0

    def _init_gamma(self, _, arr) -> None:
        """Gammas default to 1."""
        arr[:] = 1.0

    def _init_beta(self, _, arr) -> None:
        """Betas default to 0."""
        arr[:] = 0.0

    def _init_weight(self, name, arr) -> None:
        """Abstract method to initialize weight."""
        raise NotImplementedError("Must override it")

    def _init_quantized_weight(self, _, arr) -> None:
        """Random int8 weights in [-127, 127)."""
        # MXNet: draws one random integer and broadcasts it to the whole array.
        value = np.floor(ndarray.random.uniform(-127, 127, shape=(1,)).asnumpy()[0])
        arr[:] = np.int8(value)

    def _init_default(self, name, _) -> None:
        """Raise for names with no known suffix."""
        raise ValueError(
            "Unknown initialization pattern for %s. "
            "Default initialization is now limited to "
            '"weight", "bias", "gamma" (1.0), and "beta" (0.0).'
            "Please use mx.sym.Variable(init=mx.init.*) to set initialization pattern" % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__


def _bilinear_kernel(shape: tuple) -> np.ndarray:
    """Bilinear upsampling weights of ``shape`` (N, C, H, W), as MXNet computes them."""
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3], dtype=np.float64)
    y = np.arange(shape[2], dtype=np.float64)
    plane = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
    return np.broadcast_to(plane, shape).copy()


_register = registry.get_register_func(Initializer, "initializer")
alias = registry.get_alias_func(Initializer, "initializer")
create = registry.get_create_func(Initializer, "initializer")


def register(klass):
    """Register a custom initializer so it can be created by (lower-cased) name.

    Parameters
    ----------
    klass : class
        A subclass of `mx.init.Initializer`.
    """
    return _register(klass)


# ---------------------------------------------------------------------------- composites
class Load:
    """Initialize variables by loading data from file or dict.

    Parameters
    ----------
    param : str or dict of str->`NDArray`
        Parameter file or dict mapping name to NDArray (``arg:``/``aux:`` prefixes dropped).
    default_init : Initializer
        Default initializer when name is not found in `param`.
    verbose : bool
        Flag for enabling logging of source when initializing.
    """

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = ndarray.load(param)
        assert isinstance(param, dict)
        self.param = {}
        for name, arr in param.items():
            key = name[4:] if name.startswith(("arg:", "aux:")) else name
            self.param[key] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            assert arr.shape == self.param[name].shape, \
                "Parameter %s cannot be initialized from loading. " % name + \
                "Shape mismatch, target %s vs loaded %s" % (str(arr.shape),
                                                            self.param[name].shape)
            arr[:] = self.param[name]
            if self.verbose:
                _LOG.info("Initialized %s by loading", name)
        else:
            assert self.default_init is not None, \
                "Cannot Initialize %s. Not found in loaded param " % name + \
                "and no default Initializer is provided."
            self.default_init(name, arr)
            if self.verbose:
                _LOG.info("Initialized %s by default", name)


class Mixed:
    """Initialize parameters using multiple initializers.

    Parameters
    ----------
    patterns : list of str
        List of regular expressions matching parameter names (``re.match``).
    initializers : list of Initializer
        List of initializers corresponding to `patterns`.
    """

    def __init__(self, patterns, initializers):
        assert len(patterns) == len(initializers)
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        # MXNet: the '%s' is never filled in.
        raise ValueError('Parameter name %s did not match any pattern. Consider'
                         'add a ".*" pattern at the and with default Initializer.')


# ---------------------------------------------------------------------------- simple initializers
@register
@alias("zeros")
class Zero(Initializer):
    """Initialize weights to zero."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Initialize weights to one."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Initialize the weights to a given value (a scalar or an array of the parameter's shape).

    Parameters
    ----------
    value : float, NDArray
        Value to set.
    """

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        val = self._kwargs["value"]
        if not np.isscalar(val):
            as_np = val if isinstance(val, np.ndarray) else val.asnumpy()
            self._kwargs["value"] = as_np.tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Initialize weights with values uniformly sampled from [-`scale`, `scale`].

    Parameters
    ----------
    scale : float, optional
        The bound on the range of the generated random values. Default 0.07.
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        ndarray.random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """Initialize weights with values from N(0, `sigma`^2).

    Parameters
    ----------
    sigma : float, optional
        Standard deviation of the normal distribution. Default 0.01.
    """

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        ndarray.random.normal(0, self.sigma, arr.shape, out=arr)


@register
class Orthogonal(Initializer):
    """Initialize weight as an orthogonal matrix (Saxe et al., arXiv:1312.6120).

    Parameters
    ----------
    scale : float, optional
        Scaling factor of weight.
    rand_type : str, optional
        Use "uniform" or "normal" random numbers to initialize weight.
    """

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = ndarray.random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = ndarray.random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            # MXNet: fails later with an UnboundLocalError; say what is wrong instead.
            raise ValueError("Unknown random type %s" % self.rand_type)
        u, _s, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """"Xavier" initialization: keep the scale of gradients roughly equal across layers.

    With ``rnd_type='uniform'`` values are drawn from [-c, c] with
    ``c = sqrt(magnitude / factor)``; with ``'gaussian'`` from N(0, c^2). ``factor`` is
    ``(fan_in + fan_out) / 2`` (``'avg'``), ``fan_in`` (``'in'``) or ``fan_out`` (``'out'``).

    Parameters
    ----------
    rnd_type : str, optional
        Random generator type, can be ``'gaussian'`` or ``'uniform'``.
    factor_type : str, optional
        Can be ``'avg'``, ``'in'``, or ``'out'``.
    magnitude : float, optional
        Scale of random number.
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError("Xavier initializer cannot be applied to vector {0}. It requires at"
                             " least 2D.".format(name))
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == "avg":
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == "in":
            factor = fan_in
        elif self.factor_type == "out":
            factor = fan_out
        else:
            raise ValueError("Incorrect factor type")
        scale = float(np.sqrt(self.magnitude / factor))
        if self.rnd_type == "uniform":
            ndarray.random.uniform(-scale, scale, arr.shape, out=arr)
        elif self.rnd_type == "gaussian":
            ndarray.random.normal(0, scale, arr.shape, out=arr)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    """Initialize the weight as in He et al. (arXiv:1502.01852): gaussian Xavier with
    ``magnitude = 2 / (1 + slope^2)``.

    Parameters
    ----------
    factor_type : str, optional
        Can be ``'avg'``, ``'in'``, or ``'out'``.
    slope : float, optional
        initial slope of any PReLU (or similar) nonlinearities.
    """

    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Initialize weight for upsampling layers."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """Initialize all biases of an LSTMCell to 0.0 except for the forget gate's.

    Parameters
    ----------
    forget_bias : float, default 1.0
        bias for the forget gate.
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


_GATES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
          "gru": ["_r", "_z", "_o"]}


def _fused_slices(mode: str, num_layers: int, bidirectional: bool, num_input: int,
                  num_hidden: int) -> list[tuple[str, int, tuple]]:
    """(name, offset, shape) of each piece of a fused RNN parameter vector (cuDNN order)."""
    gates = _GATES[mode]
    dirs = ["l", "r"] if bidirectional else ["l"]
    b, h = len(dirs), num_hidden
    out, p = [], 0
    for layer in range(num_layers):
        in_shape = (h, b * h) if layer > 0 else (h, num_input)
        for d in dirs:
            for kind, shape in (("i2h", in_shape), ("h2h", (h, h))):
                for gate in gates:
                    out.append(("%s%d_%s%s_weight" % (d, layer, kind, gate), p, shape))
                    p += shape[0] * shape[1]
    for layer in range(num_layers):
        for d in dirs:
            for kind in ("i2h", "h2h"):
                for gate in gates:
                    out.append(("%s%d_%s%s_bias" % (d, layer, kind, gate), p, (h,)))
                    p += h
    return out


@register
class FusedRNN(Initializer):
    """Initialize parameters for fused rnn layers.

    Parameters
    ----------
    init : Initializer
        initializer applied to unpacked weights. Fall back to global initializer if None.
    num_hidden : int
        should be the same with arguments passed to FusedRNNCell.
    num_layers : int
        should be the same with arguments passed to FusedRNNCell.
    mode : str
        should be the same with arguments passed to FusedRNNCell.
    bidirectional : bool
        should be the same with arguments passed to FusedRNNCell.
    forget_bias : float
        should be the same with arguments passed to FusedRNNCell.
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _num_input(self, size: int) -> int:
        """Infer the input size from the total parameter count (as FusedRNNCell does)."""
        b = 2 if self._bidirectional else 1
        m, h = len(_GATES[self._mode]), self._num_hidden
        return size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2

    def _init_weight(self, desc, arr):
        flat = arr.asnumpy().reshape(-1).copy()
        pieces = _fused_slices(self._mode, self._num_layers, self._bidirectional,
                               self._num_input(flat.size), self._num_hidden)
        end = pieces[-1][1] + int(np.prod(pieces[-1][2]))
        assert end == flat.size, "Invalid parameters size for FusedRNNCell"
        for name, offset, shape in pieces:
            size = int(np.prod(shape))
            piece = ndarray.array(flat[offset:offset + size].reshape(shape), dtype=arr.dtype)
            arg_desc = InitDesc(name, global_init=desc.global_init)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = self._forget_bias
            elif self._init is None:
                desc.global_init(arg_desc, piece)
            else:
                self._init(arg_desc, piece)
            flat[offset:offset + size] = piece.asnumpy().reshape(-1)
        arr[:] = flat.reshape(arr.shape)

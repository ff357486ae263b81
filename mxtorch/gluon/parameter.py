"""Neural network parameters: ``Parameter``, ``Constant`` and ``ParameterDict``."""
from __future__ import annotations

import warnings

import numpy as np

from .. import autograd, context, initializer, ndarray, symbol
from ..base import MXNetError, dtype_np
from ..context import Context, cpu
from ..util import is_np_array, np_array, np_shape
from .utils import shape_is_known

_BFLOAT16 = dtype_np("bfloat16")

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant',
           'ParameterDict', 'tensor_types']

mx_real_t = np.float32
tensor_types = (symbol.Symbol, ndarray.NDArray)
_NAMING_URL = "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html"


class DeferredInitializationError(MXNetError):
    """Error for unfinished deferred initialization."""


# ---------------------------------------------------------------------- NumPy mode
def _as_np(arr):
    """``arr`` as ``mx.np.ndarray`` (same memory and gradient); None stays None."""
    return None if arr is None else arr.as_np_ndarray()


def _mode_arrays(arrays):
    """Under ``npx.set_np()`` (NumPy array semantics) the arrays as ``mx.np.ndarray``."""
    if arrays is None or not is_np_array():
        return arrays
    return [_as_np(a) for a in arrays]


def save_arrays(filename, arg_dict):
    """Save a dict of arrays: ``npx.save`` (V3 records) in NumPy mode, else ``nd.save``."""
    if is_np_array():
        from .. import numpy_extension as _mx_npx
        _mx_npx.save(filename, {k: _as_np(v) for k, v in arg_dict.items()})
    else:
        ndarray.save(filename, arg_dict)


def load_arrays(filename):
    """Load arrays as :func:`save_arrays` wrote them (legacy files too, in NumPy mode)."""
    if not is_np_array():
        try:
            return ndarray.load(filename)
        except MXNetError as err:
            if "saved with numpy shape semantics" not in str(err):
                raise
        # mxtorch: parameters exported in NumPy mode load in legacy mode too (MXNet's
        # nd.load refuses their V3 records outside NumPy shape semantics)
        with np_shape(True):
            return ndarray.load(filename)
    from .. import numpy_extension as _mx_npx
    try:
        return _mx_npx.load(filename)
    except MXNetError as err:
        if 'is_np_shape' not in str(err):
            raise ValueError(str(err)) from None
        # MXNet: parameters saved without numpy semantics load in legacy mode, then
        # convert (the numpy ndarray covers every legacy case).
        with np_array(False):
            with np_shape(False):
                loaded = ndarray.load(filename)
        if isinstance(loaded, dict):
            return {k: _as_np(v) for k, v in loaded.items()}
        return [_as_np(v) for v in loaded]


class Parameter:
    """A Container holding parameters (weights) of Blocks.

    :py:class:`Parameter` holds a copy of the parameter on each :py:class:`Context` after
    it is initialized with ``Parameter.initialize(...)``. If :py:attr:`grad_req` is
    not ``'null'``, it will also hold a gradient array on each :py:class:`Context`.

    Parameters
    ----------
    name : str
        Name of this parameter.
    grad_req : {'write', 'add', 'null'}, default 'write'
        Specifies how to update gradient to grad arrays.
    shape : int or tuple of int, default None
        Shape of this parameter (0 marks an unknown dimension).
    dtype : numpy.dtype or str, default 'float32'
        Data type of this parameter.
    lr_mult : float, default 1.0
        Learning rate multiplier.
    wd_mult : float, default 1.0
        Weight decay multiplier (L2 regularizer coefficient).
    init : Initializer, default None
        Initializer of this parameter. Will use the global initializer by default.
    allow_deferred_init : bool, default False
        Whether initialization may wait until the shape is known.
    differentiable : bool, default True
        A non-differentiable parameter always has ``grad_req='null'``.
    stype: {'default', 'row_sparse', 'csr'}, defaults to 'default'.
        The storage type of the parameter.
    grad_stype: {'default', 'row_sparse', 'csr'}, defaults to 'default'.
        The storage type of the parameter's gradient.
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=mx_real_t,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype='default', grad_stype='default'):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = shape
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        valid_stypes = ['default', 'row_sparse', 'csr']
        assert grad_stype in valid_stypes, "grad_stype for Parameter '%s' must be " \
            "one of 'default', 'row_sparse', or 'csr', but got '%s'" % (name, grad_stype)
        assert stype in valid_stypes, "stype for Parameter '%s' must be " \
            "one of 'default', 'row_sparse', or 'csr', but got '%s'" % (name, stype)
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        s = 'Parameter {name} (shape={shape}, dtype={dtype})'
        return s.format(name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        assert req in ['write', 'add', 'null'], \
            "grad_req must be one of 'write', 'add', or 'null', but got '%s'" % req
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null' and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The type of the parameter; setting it casts the parameter."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape of the parameter (an unknown dimension size is 0)."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if self._shape is None:
            self._shape = new_shape
            return
        assert len(self._shape) == len(new_shape) and \
            all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape)), \
            "Expected shape %s is incompatible with given shape %s." % (
                str(new_shape), str(self._shape))
        self._shape = new_shape

    def _set_trainer(self, trainer):
        """Set the trainer this parameter is associated with."""
        if self._stype != 'default' and self._trainer and trainer and \
                self._trainer is not trainer:
            raise RuntimeError(
                "Failed to set the trainer for Parameter '%s' because it was already set. "
                "More than one trainers for a %s Parameter is not supported."
                % (self.name, self._stype))
        self._trainer = trainer

    def _check_and_get(self, arr_list, ctx):
        """Return the array(s) of ``arr_list`` for ``ctx`` (``list`` for all of them)."""
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = context.current_context()
            ctx_list = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(ctx_list):
                idx = ctx_list[ctx.device_id]
                if idx is not None:
                    return arr_list[idx]
            raise RuntimeError(
                "Parameter '%s' was not initialized on context %s. "
                "It was only initialized on %s." % (self.name, str(ctx), str(self._ctx_list)))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers." % (self.name))
        raise RuntimeError(
            "Parameter '%s' has not been initialized. Note that "
            "you should initialize parameters and create Trainer "
            "with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of "
            "nested child Blocks" % (self.name))

    def _get_row_sparse(self, arr_list, ctx, row_id):
        """Get row_sparse data (held densely here) based on row_id."""
        if not isinstance(row_id, ndarray.NDArray):
            raise TypeError("row_id must have NDArray type, but %s is given" % (type(row_id)))
        if not self._trainer:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no "
                               "Trainer is created with it." % self.name)
        return self._check_and_get(arr_list, ctx)

    def _check_load_dtype(self, data, cast_dtype, dtype_source):
        """Check/convert ``data``'s dtype against the parameter's for ``_load_init``."""
        if cast_dtype and np.dtype(self.dtype).type != data.dtype:
            if dtype_source == 'current':
                data = data.astype(self.dtype, copy=False)
            elif dtype_source == 'saved':
                self.dtype = data.dtype
        else:
            # MXNet: bfloat16's dtype is a structured NumPy dtype, compared as a whole
            expected = np.dtype(self.dtype)
            assert (expected if expected == _BFLOAT16 else expected.type) == data.dtype, \
                "Failed loading Parameter '%s' from saved params: " \
                "dtype incompatible expected %s vs saved %s. " \
                "Set cast_dtype=True to cast the dtype of saved params." % (
                    self.name, str(self.dtype), str(data.dtype))
        return data

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """(Re)initializes by loading from data."""
        if cast_dtype:
            assert dtype_source in ['current', 'saved']
        if self.shape:
            for self_dim, data_dim in zip(self.shape, data.shape):
                assert self_dim in (0, data_dim), \
                    "Failed loading Parameter '%s' from saved params: " \
                    "shape incompatible expected %s vs saved %s" % (
                        self.name, str(self.shape), str(data.shape))
            self.shape = tuple(i if i != 0 else j for i, j in zip(self.shape, data.shape))
        if self.dtype:
            data = self._check_load_dtype(data, cast_dtype, dtype_source)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                assert ctx is None or set(ctx) == set(self._deferred_init[1]), \
                    "Failed to load Parameter '%s' on %s because it was " \
                    "previous initialized on %s." % (self.name, str(ctx), str(self.list_ctx()))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            assert ctx is None or set(ctx) == set(self.list_ctx()), \
                "Failed to load Parameter '%s' on %s because it was " \
                "previous initialized on %s." % (self.name, str(ctx), str(self.list_ctx()))
            self.set_data(data)
        self._deferred_init = ()

    def _finish_deferred_init(self):
        """Finishes deferred initialization."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        assert shape_is_known(self.shape), \
            "Cannot initialize Parameter '%s' because it has " \
            "invalid shape: %s. Please specify in_units, " \
            "in_channels, etc for `Block`s." % (self.name, str(self.shape))
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(shape=self.shape, dtype=self.dtype, ctx=context.cpu())
                if is_np_array():
                    data = _as_np(data)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Sets data and grad."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, ctx in enumerate(self._ctx_list):
            dev_list = self._ctx_map[ctx.device_typeid & 1]
            while len(dev_list) <= ctx.device_id:
                dev_list.append(None)
            dev_list[ctx.device_id] = i
        self._data = _mode_arrays([data.copyto(ctx) for ctx in self._ctx_list])
        self._init_grad()

    def _init_grad(self):
        """Initialize grad buffers."""
        if self.grad_req == 'null':
            self._grad = None
            return
        self._grad = _mode_arrays([ndarray.zeros(shape=i.shape, dtype=i.dtype, ctx=i.context)
                                   for i in self._data])
        autograd.mark_variables(self._check_and_get(self._data, list),
                                self._grad, self.grad_req)

    def _reduce(self):
        """Reduce data from multiple context to cpu."""
        ctx = context.cpu()
        block = self._check_and_get(self._data, list)
        if len(block) > 1:
            data = ndarray.add_n(*(w.copyto(ctx) for w in block)) / len(block)
        else:
            data = block[0].copyto(ctx)
        return data

    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Initializes parameter and gradient arrays. Only used for :py:class:`NDArray` API.

        Parameters
        ----------
        init : Initializer
            The initializer to use. Overrides :py:meth:`Parameter.init` and default_init.
        ctx : Context or list of Context, defaults to :py:meth:`context.current_context()`.
            Initialize Parameter on given context. If ctx is a list of Context, a
            copy will be made for each context.
        default_init : Initializer
            Default initializer is used when both :py:func:`init`
            and :py:meth:`Parameter.init` are ``None``.
        force_reinit : bool, default False
            Whether to force re-initialization if parameter is already initialized.
        """
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. "
                          "Set force_reinit=True to re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has "
                             "invalid shape: %s." % (self.name, str(self.shape)))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def reset_ctx(self, ctx):
        """Re-assign Parameter to other contexts.

        Parameters
        ----------
        ctx : Context or list of Context, default ``context.current_context()``.
            Assign Parameter to given context. If ctx is a list of Context, a
            copy will be made for each context.
        """
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it "
                             "has not been initialized." % self.name)

    def set_data(self, data):
        """Sets this parameter's value on all contexts."""
        self.shape = data.shape
        if self._data is None:
            assert self._deferred_init, \
                "Parameter '%s' has not been initialized" % self.name
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer and trainer._kv_initialized and trainer._update_on_kvstore:
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._check_and_get(self._data, list):
                arr[:] = data

    def row_sparse_data(self, row_id):
        """Returns the 'row_sparse' parameter on the same context as row_id's.

        mxtorch stores row_sparse parameters densely, so the whole array is returned.

        Parameters
        ----------
        row_id: NDArray
            Row ids to retain for the 'row_sparse' parameter.

        Returns
        -------
        NDArray on row_id's context
        """
        if self._stype != 'row_sparse':
            raise RuntimeError("Cannot return a copy of Parameter %s via row_sparse_data() "
                               "because its storage type is %s. Please use data() instead."
                               % (self.name, self._stype))
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """Returns the 'row_sparse' parameter on all contexts, in the same order as creation.

        Parameters
        ----------
        row_id: NDArray
            Row ids to retain for the 'row_sparse' parameter.

        Returns
        -------
        list of NDArrays
        """
        if self._stype != 'row_sparse':
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_row_sparse_data() because its storage type is %s. Please "
                               "use data() instead." % (self.name, self._stype))
        return self._get_row_sparse(self._data, list, row_id)

    def data(self, ctx=None):
        """Returns this parameter on one context (which it must have been initialized on).

        Parameters
        ----------
        ctx : Context
            Desired context.

        Returns
        -------
        NDArray on ctx
        """
        if self._stype != 'default':
            raise RuntimeError("Cannot return a copy of Parameter '%s' on ctx %s via data() "
                               "because its storage type is %s. Please use row_sparse_data() "
                               "instead." % (self.name, str(ctx), self._stype))
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """Returns this parameter on all contexts, in the same order as creation.

        Returns
        -------
        list of NDArrays
        """
        if self._stype != 'default':
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_data() because its storage type is %s. Please use "
                               "row_sparse_data() instead." % (self.name, self._stype))
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """Returns a gradient buffer for this parameter on one context.

        Parameters
        ----------
        ctx : Context
            Desired context.
        """
        if self._data is not None and self._grad is None:
            raise RuntimeError(
                "Cannot get gradient array for Parameter '%s' "
                "because grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """Returns gradient buffers on all contexts, in the same order as :py:meth:`values`."""
        if self._data is not None and self._grad is None:
            raise RuntimeError(
                "Cannot get gradient array for Parameter '%s' "
                "because grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """Returns a list of contexts this parameter is initialized on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    def zero_grad(self):
        """Sets gradient buffer on all contexts to 0. No action is taken if
        parameter is uninitialized or doesn't require gradient."""
        if self._grad is None:
            return
        for i in self._grad:
            ndarray.zeros_like(i, out=i)

    def var(self):
        """Returns a symbol representing this parameter."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                   init=self.init, stype=self._stype)
            if is_np_array():
                self._var = self._var.as_np_ndarray()
        return self._var

    def cast(self, dtype):
        """Cast data and gradient of this Parameter to a new data type.

        Parameters
        ----------
        dtype : str or numpy.dtype
            The new data type.
        """
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A constant parameter for holding immutable tensors.

    `Constant`s are ignored by `autograd` and `Trainer`, thus their values
    will not change during training. But you can still update their values
    manually with the `set_data` method.

    Parameters
    ----------
    name : str
        Name of the parameter.
    value : array-like
        Initial value for the constant.
    """

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
        self.value = value

        class Init(initializer.Initializer):
            """Copies the constant's value."""

            def _init_weight(self, _, arr):
                value.copyto(arr)
        init_name = 'Constant_{}_{}'.format(name, id(self))
        initializer.alias(init_name)(Init)
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self):
        s = 'Constant {name} (shape={shape}, dtype={dtype})'
        return s.format(name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn('Constant parameter "{}" does not support '
                          'grad_req other than "null", and new value "{}" '
                          'is ignored.'.format(self.name, req))


from .parameter_dict import ParameterDict  # noqa: E402  (ParameterDict needs Parameter)

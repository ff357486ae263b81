"""Base container class for all neural network models (MXNet's ``gluon/block.py``)."""
from __future__ import annotations

import json
import os
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer
from .. import name as _name
from ..ndarray import NDArray
from ..symbol import Symbol, load_json
from ..util import is_np_array
from .parameter import Parameter, ParameterDict, load_arrays, save_arrays
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ['Block', 'HybridBlock', 'SymbolBlock']


class _BlockScope:
    """Scope for collecting child `Block` s."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """Creates prefix and params for new `Block`."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.NameManager.current_manager().get(None, hint) + '_'
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = '%s%d_' % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _gather_type_ctx_info(args):
    """Find (has_symbol, has_ndarray, ctx_set, first_ctx) in the nested ``args``."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if isinstance(args, Symbol):
        return True, False, set(), None
    if isinstance(args, (list, tuple)):
        has_symbol = False
        has_ndarray = False
        ctx_set = set()
        first_ctx = None
        for ele in args:
            ele_has_sym, ele_has_nd, ele_ctx_set, ele_first_ctx = _gather_type_ctx_info(ele)
            has_symbol = has_symbol or ele_has_sym
            has_ndarray = has_ndarray or ele_has_nd
            if first_ctx is None and ele_first_ctx is not None:
                first_ctx = ele_first_ctx
            ctx_set = ctx_set | ele_ctx_set
            if has_symbol and has_ndarray:
                break
        return has_symbol, has_ndarray, ctx_set, first_ctx
    return False, False, set(), None


def _flatten(args, inout_str):
    """Parse the arguments into a flattened list + a format array of the structure."""
    if isinstance(args, NDArray):
        return [args], int(0)
    if isinstance(args, Symbol):
        length = len(args.list_outputs())
        length = length if length > 1 else 0
        return [args], int(length)
    if args is None:
        return [None], int(-1)
    if not isinstance(args, (list, tuple)):
        raise ValueError("When hybridized, the input of HybridBlock {}"
                         " must be (nested) list of Symbol"
                         " or NDArray, "
                         "but got {} of type {}".format(inout_str, str(args), str(type(args))))
    flat = []
    fmts = []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """Reconstruct the structured arguments based on the flattened version."""
    def _merger(args, fmt):
        """Recursive call to merge the arguments."""
        if isinstance(fmt, int):
            if fmt < -1:
                raise ValueError("Unsupported encoded format {}.".format(fmt))
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                if args[0] is not None:
                    raise ValueError('We do not support passing types that are not None'
                                     ' when the initial HybridBlock has received NoneType and'
                                     ' has been hybridized.'
                                     ' Received arg = {}, fmt = {}.'.format(args[0], fmt))
                return None, args[1:]
            return args[:fmt], args[fmt:]
        if not isinstance(args, (list, tuple)):
            raise ValueError("When hybridized, the output of HybridBlock must be (nested)"
                             " list of Symbol or NDArray, "
                             "but got {} of type {}".format(args, type(args)))
        ret = []
        for i in fmt:
            res, args = _merger(args, i)
            ret.append(res)
        return ret, args
    return _merger(args, fmt)[0]


def _check_all_np_ndarrays(out):
    """Check if ndarrays/symbols in out are all np.ndarray/np._Symbol."""
    from ..numpy.multiarray import ndarray as np_ndarray
    from ..symbol.numpy import _Symbol as np_symbol
    if isinstance(out, (NDArray, Symbol)) and not isinstance(out, (np_ndarray, np_symbol)):
        raise TypeError("Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray`"
                        " or `mxnet.symbol.numpy._Symbol`, while got output type {}"
                        .format(str(type(out))))
    if isinstance(out, (list, tuple)):
        for i in out:
            _check_all_np_ndarrays(i)


def _to_np_outputs(out):
    """NumPy mode: legacy NDArray/Symbol outputs (nested) as np.ndarray/np._Symbol.

    mxtorch's Gluon layers call the registry operators through ``F`` whatever the mode;
    in NumPy mode their outputs are viewed as NumPy arrays/symbols (same memory/graph).
    """
    if isinstance(out, (NDArray, Symbol)):
        return out.as_np_ndarray()
    if isinstance(out, list):
        return [_to_np_outputs(o) for o in out]
    if isinstance(out, tuple):
        return tuple(_to_np_outputs(o) for o in out)
    return out


def _find_unregistered_block(data, children):
    """Whether a nested list/tuple/dict holds a Block that is not in ``children``."""
    if isinstance(data, (list, tuple)):
        return any(_find_unregistered_block(ele, children) for ele in data)
    if isinstance(data, dict):
        return any(_find_unregistered_block(v, children) for v in data.values())
    if isinstance(data, Block):
        return data not in children
    return False


class Block:
    """Base class for all neural network layers and models. Your models should
    subclass this class.

    :py:class:`Block` can be nested recursively in a tree structure. You can create and
    assign child :py:class:`Block` as regular attributes; they are registered and
    :py:meth:`collect_params` collects their Parameters recursively. You can also
    manually register child blocks with :py:meth:`register_child`.

    Parameters
    ----------
    prefix : str
        Prefix acts like a name space. All children blocks created in parent block's
        :py:meth:`name_scope` will have parent block's prefix in their name.
    params : ParameterDict or None
        :py:class:`ParameterDict` for sharing weights with the new :py:class:`Block`. For
        example, if you want ``dense1`` to share ``dense0``'s weights, you can do::

            dense0 = nn.Dense(20)
            dense1 = nn.Dense(20, params=dense0.collect_params())
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        modstr = '\n'.join(['  ({key}): {block}'.format(key=key,
                                                        block=_indent(block.__repr__(), 2))
                            for key, block in self.__dict__.items() if isinstance(block, Block)])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __setattr__(self, name, value):
        """Registers parameters."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError('Changing attribute type for {name} from {type1} to {type2}'
                                'is not allowed.'.format(
                                    name=name, type1=type(existing), type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            # MXNet: the message keeps its literal '%s'
            assert name not in self._reg_params, \
                "Overriding Parameter attribute %s is not allowed. " \
                "If you want to share parameters between blocks, please set " \
                "'params' at Block construction instead."
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        """Warn about lists/tuples/dicts attributes that hold unregistered Blocks."""
        children = set(self._children.values())
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith('__') or k == '_children'):
                if _find_unregistered_block(v, children):
                    warnings.warn('"{name}" is an unregistered container with Blocks. '
                                  'Note that Blocks inside the list, tuple or dict will not be '
                                  'registered automatically. Make sure to register them using '
                                  'register_child() or switching to '
                                  'nn.Sequential/nn.HybridSequential instead. '
                                  .format(name=self.__class__.__name__ + "." + k), stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """Prefix of this :py:class:`Block`."""
        return self._prefix

    @property
    def name(self):
        """Name of this :py:class:`Block`, without '_' in the end."""
        return self._name

    def name_scope(self):
        """Returns a name space object managing a child :py:class:`Block` and parameter
        names. Should be used within a ``with`` statement::

            with self.name_scope():
                self.dense = nn.Dense(20)
        """
        return self._scope

    @property
    def params(self):
        """Returns this :py:class:`Block`'s parameter dictionary (does not include its
        children's parameters)."""
        return self._params

    def collect_params(self, select=None):
        """Returns a :py:class:`ParameterDict` containing this :py:class:`Block` and all of its
        children's Parameters (default), or those whose names match the regular expression
        ``select``, e.g. ``model.collect_params('.*weight|.*bias')``.

        Parameters
        ----------
        select : str
            regular expressions

        Returns
        -------
        The selected :py:class:`ParameterDict`
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in self.params.items()
                        if pattern.match(name)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save parameters to file (structural names such as ``0.weight``).

        Parameters
        ----------
        filename : str
            Path to file.
        deduplicate : bool, default False
            If True, save shared parameters only once. Otherwise, if a Block
            contains multiple sub-blocks that share parameters, each of the
            shared parameters will be separately saved for every sub-block.
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            # MXNet: shared parameters are stored once, under the last structural name
            reverse_params = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse_params.items()}
        arg_dict = {key: val._reduce() for key, val in params.items()}
        save_arrays(filename, arg_dict)

    def save_params(self, filename):
        """[Deprecated] Please use save_parameters.

        Parameters
        ----------
        filename : str
            Path to file.
        """
        warnings.warn("save_params is deprecated. Please use save_parameters. "
                      "Note that if you want load from SymbolBlock later, please "
                      "use export instead. For details, see "
                      "https://mxnet.apache.org/tutorials/gluon/save_lo"
                      "ad_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError('%s\nsave_params is deprecated. Using '
                             'save_parameters may resolve this error.' % e) from None

    def load_parameters(self, filename, ctx=None, allow_missing=False,
                        ignore_extra=False, cast_dtype=False, dtype_source='current'):
        """Load parameters from file previously saved by `save_parameters`.

        Parameters
        ----------
        filename : str
            Path to parameter file.
        ctx : Context or list of Context, default cpu()
            Context(s) to initialize loaded parameters on.
        allow_missing : bool, default False
            Whether to silently skip loading parameters not represents in the file.
        ignore_extra : bool, default False
            Whether to silently ignore parameters from the file that are not
            present in this Block.
        cast_dtype : bool, default False
            Cast the data type of the NDArray loaded from the checkpoint to the dtype
            provided by the Parameter if any.
        dtype_source : str, default 'current'
            must be in {'current', 'saved'}
            Only valid if cast_dtype=True, specify the source of the dtype for casting
            the parameters
        """
        loaded = load_arrays(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any('.' in i for i in loaded.keys()):
            # MXNet: legacy save_params file, keyed by prefix-stripped Parameter names
            del loaded
            self.collect_params().load(
                filename, ctx, allow_missing, ignore_extra, self.prefix,
                cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            _check_missing(params, loaded, filename)
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    "Parameter '%s' loaded from file '%s' is not present in ParameterDict, "
                    "which contains parameters %s. Set ignore_extra=True to ignore. " % (
                        name, filename, _brief_print_list(self._params.keys())))
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                        dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False,
                    ignore_extra=False):
        """[Deprecated] Please use load_parameters.

        Parameters
        ----------
        filename : str
            Path to parameter file.
        ctx : Context or list of Context, default cpu()
            Context(s) to initialize loaded parameters on.
        allow_missing : bool, default False
            Whether to silently skip loading parameters not represents in the file.
        ignore_extra : bool, default False
            Whether to silently ignore parameters from the file that are not
            present in this Block.
        """
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block, name=None):
        """Registers block as a child of self. :py:class:`Block` s assigned to self as
        attributes will be registered automatically."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Registers a forward pre-hook ``hook(block, input) -> None`` on the block.

        Returns
        -------
        :class:`mxtorch.gluon.utils.HookHandle`
        """
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Registers a forward hook ``hook(block, input, output) -> None`` on the block.

        Returns
        -------
        :class:`mxtorch.gluon.utils.HookHandle`
        """
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Applies ``fn`` recursively to every child block as well as self.

        Parameters
        ----------
        fn : callable
            Function to be applied to each submodule, of form `fn(block)`.

        Returns
        -------
        this block
        """
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initializes :py:class:`Parameter` s of this :py:class:`Block` and its children.
        Equivalent to ``block.collect_params().initialize(...)``

        Parameters
        ----------
        init : Initializer
            Global default Initializer to be used when :py:meth:`Parameter.init` is ``None``.
            Otherwise, :py:meth:`Parameter.init` takes precedence.
        ctx : Context or list of Context
            Keeps a copy of Parameters on one or many context(s).
        verbose : bool, default False
            Whether to verbosely print out details on initialization.
        force_reinit : bool, default False
            Whether to force re-initialization if parameter is already initialized.
        """
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Please refer description of HybridBlock hybridize()."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def save(self, prefix):
        """Save the model architecture and parameters to ``<prefix>-model.json`` and
        ``<prefix>-model.params`` to load again later with :py:meth:`load`.

        Parameters
        ----------
        prefix : str
            The prefix to use in filenames for saving this model.
        """
        from ..format.fileset import write_set
        model = {}
        index = [0]
        _save_cached_graphs(self, index, model)

        def write_json(path):
            with open(path, 'w') as fp:
                json.dump(model, fp)
                fp.flush()
                os.fsync(fp.fileno())

        # one set: a reader (or a save killed midway) never sees new graphs with old params
        write_set(prefix + '-model.manifest', [(prefix + '-model.json', write_json),
                                               (prefix + '-model.params', self.save_parameters)])

    def load(self, prefix):
        """Load a model saved using the `save` API (the architecture must be recreated
        in the same order).

        Parameters
        ----------
        prefix : str
            The prefix to use in filenames for loading this model.
        """
        from ..format.fileset import load_set

        def read(files):
            with open(files.path(prefix + '-model.json')) as fp:
                model = json.load(fp)
            return model, files.path(prefix + '-model.params')

        model, params = load_set(prefix + '-model.manifest', read)
        index = [0]
        _load_cached_graphs(self, index, model)
        self.load_parameters(params)

    def cast(self, dtype):
        """Cast this Block to use another data type.

        Parameters
        ----------
        dtype : str or numpy.dtype
            The new data type.
        """
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def __call__(self, *args):
        """Calls forward. Only accepts positional arguments."""
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        if is_np_array():
            _check_all_np_ndarrays(out)
        return out

    def forward(self, *args):
        """Overrides to implement forward computation using :py:class:`NDArray`. Only
        accepts positional arguments.

        Parameters
        ----------
        *args : list of NDArray
            Input tensors.
        """
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        """Install callback monitor.

        Parameters
        ----------
        callback : function
            Takes a string (node name), a string (operator name) and an NDArray.
        monitor_all : bool, default False
            If true, monitor both input and output, otherwise monitor output only.
        """
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print the summary of the model's output and parameters.

        The network must have been initialized, and must not have been hybridized.

        Parameters
        ----------
        inputs : object
            Any input that the model supports. For any tensor in the input, only
            :class:`mxtorch.ndarray.NDArray` is supported.
        """
        from .summary import run_summary
        run_summary(self, inputs)


def _check_missing(params, loaded, filename):
    """Assert every structural parameter (or one of its shared aliases) is in ``loaded``."""
    params_inv = defaultdict(list)
    for k, v in params.items():
        params_inv[v].append(k)
    for name, param in params.items():
        assert any(p in loaded for p in params_inv[param]), \
            "Parameter '%s' is missing in file '%s', which contains parameters: %s. " \
            "Set allow_missing=True to ignore missing parameters." % (
                name, filename, _brief_print_list(loaded.keys()))


def _save_cached_graphs(blk, index, structure):
    """Record ``blk`` (and its children) for :py:meth:`Block.save`."""
    from .hybrid import HybridBlock
    mdl = {'orig_name': blk.name}
    name = type(blk).__name__.lower()
    structure[name + str(index[0])] = mdl
    if isinstance(blk, HybridBlock):
        if blk._cached_graph:
            mdl['in_format'] = blk._in_format
            mdl['out_format'] = blk._out_format
            syms, out = blk._cached_graph
            mdl['inputs'] = [sym.tojson() for sym in syms]
            mdl['symbol'] = out.tojson()
            mdl['hybridized'] = True
        else:
            mdl['hybridized'] = False
    children = dict()
    mdl['children'] = children
    for ch_name, child in blk._children.items():
        index[0] += 1
        children[child.name] = ch_name
        _save_cached_graphs(child, index, mdl)


def _load_cached_graphs(blk, index, structure):
    """Restore names and cached graphs recorded by :func:`_save_cached_graphs`."""
    from .hybrid import HybridBlock
    name = type(blk).__name__.lower()
    mdl = structure[name + str(index[0])]
    blk._name = mdl['orig_name']
    if isinstance(blk, HybridBlock) and mdl['hybridized']:
        blk._in_format = mdl['in_format']
        blk._out_format = mdl['out_format']
        out = load_json(mdl['symbol'])
        syms = [load_json(inp) for inp in mdl['inputs']]
        blk._cached_graph = (syms, out)
        blk._active = True
    for p in list(blk.params.keys()):
        param = blk.params._params[p]
        new_name = blk.name + '_' + p[len(blk.params._prefix):]
        blk.params._params.pop(p)
        blk.params._params[new_name] = param
    for child in blk._children.values():
        index[0] += 1
        _load_cached_graphs(child, index, mdl)
    children = mdl['children']
    for ch_name in list(blk._children.keys()):
        child = blk._children.pop(ch_name)
        blk._children[children[child.name]] = child


from .hybrid import HybridBlock  # noqa: E402
from .symbol_block import SymbolBlock  # noqa: E402

"""``HybridBlock``: a Block that runs imperatively or as one compiled Symbol graph."""
from __future__ import annotations

import warnings

from .. import ndarray, symbol
from ..graph.partition import is_known_backend
from ..ndarray import NDArray
from ..ndarray.ndarray import _wrap
from ..util import is_np_array
from .block import Block, _flatten, _gather_type_ctx_info, _regroup, _to_np_outputs
from .parameter import save_arrays
from .parameter import DeferredInitializationError, Parameter

__all__ = ['HybridBlock']


def _op_names(program):
    """Map monitored output/input names of a compiled program to operator names."""
    names = {}
    for n in program.nodes:
        if n.is_variable:
            continue
        for oname in n.output_names():
            names['%s_%s' % (n.name, oname)] = n.op.name
        for iname in n.input_names():
            names['%s_%s' % (n.name, iname)] = n.op.name
    return names


def _run_with_op_hook(cached_op, cargs, callback, monitor_all):
    """Run ``cached_op`` node by node, calling ``callback(name, op_name, array)``."""
    from .. import autograd
    program = cached_op.program
    ops = _op_names(program)
    ctx = cargs[0].context

    def _cb(name, tensor):
        callback(name, ops.get(name, ''), _wrap(tensor.detach(), ctx))
    res = program.run_monitored([a._t for a in cargs], autograd.is_training(),
                                ctx.torch_device, _cb, monitor_all)
    outs = [_wrap(r, ctx) for r in res]
    return outs[0] if len(outs) == 1 else outs


def _is_np_ndarray(arr) -> bool:
    """Whether ``arr`` is an ``mx.np.ndarray``."""
    from ..numpy.multiarray import ndarray as np_ndarray
    return isinstance(arr, np_ndarray)


class HybridBlock(Block):
    """`HybridBlock` supports forwarding with both Symbol and NDArray.

    Before activating with :py:meth:`hybridize()`, :py:class:`HybridBlock` works just like
    a normal :py:class:`Block` (``hybrid_forward`` runs with ``F=mx.nd``). After
    activation, it builds a symbolic graph of the forward computation once (``F=mx.sym``),
    compiles it to a :py:class:`CachedOp` and runs that on subsequent forwards.

    Forward computation in :py:class:`HybridBlock` must be static to work with
    :py:class:`Symbol` s.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts = {}

    def __setattr__(self, name, value):
        """Registers parameters."""
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _get_graph(self, *args):
        """Build (once) the symbolic graph: ``(input variables, output group)``."""
        if not self._cached_graph:
            flatten_args, self._in_format = _flatten(args, "input")
            flatten_inputs = []
            symbol_inputs = []
            cnt = 0
            real_arg_num = sum([ele is not None for ele in flatten_args])
            if real_arg_num == 0:
                raise ValueError('All args are None and we do not support such a case.'
                                 ' Received args={}'.format(args))
            for arg in flatten_args:
                if arg is not None:
                    name = 'data{}'.format(cnt) if real_arg_num > 1 else 'data'
                    arg_sym = symbol.var(name)
                    if isinstance(arg, NDArray) and _is_np_ndarray(arg):
                        arg_sym = arg_sym.as_np_ndarray()
                    cnt += 1
                    flatten_inputs.append(arg_sym)
                    symbol_inputs.append(arg_sym)
                else:
                    flatten_inputs.append(None)
            grouped_inputs = _regroup(flatten_inputs, self._in_format)
            params = {i: j.var() for i, j in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped_inputs, **params)
            out, self._out_format = _flatten(out, "output")
            group = symbol.Group(out)
            if is_np_array():
                # MXNet: a numpy-mode graph's CachedOp returns mx.np.ndarray outputs
                group = group.as_np_ndarray()
            self._cached_graph = symbol_inputs, group
        return self._cached_graph

    def _check_graph_inputs(self, data_names, params, expected_names):
        """Assert every graph input is known; warn about unused inputs and Parameters."""
        param_names = set(params.keys())
        for name in expected_names:
            assert name in param_names or name in data_names, \
                "Unknown input to HybridBlock: %s" % name
        used_data_names = [i for i in data_names if i in expected_names]
        if len(used_data_names) != len(data_names):
            unused = ', '.join(['%d-th' % i for name, i in data_names.items()
                                if name not in expected_names])
            warnings.warn("The %s input to HybridBlock is not used by any "
                          "computation. Is this intended?" % unused, stacklevel=5)
        used_param_names = [i for i in param_names if i in expected_names]
        if len(used_param_names) != len(param_names):
            unused = ', '.join(list(param_names - set(used_param_names)))
            warnings.warn("Parameter %s is not used by any "
                          "computation. Is this intended?" % unused, stacklevel=5)

    def _build_cache(self, *args):
        """Build the graph, finish deferred initialization and create the CachedOp."""
        data, out = self._get_graph(*args)
        data_names = {data.name: i for i, data in enumerate(data)}
        input_names = out.list_inputs()
        if len(self._cached_op_args) > 0:
            params = {p[1].name: p[1] for p in self._cached_op_args
                      if isinstance(p[1], Parameter)}
        else:
            params = self.collect_params()
        self._check_graph_inputs(data_names, params, set(input_names))
        args, _ = _flatten(args, "input")
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()
        if self._backend:   # MXNet: the graph is partitioned for the backend first
            out = self._partitioned(out, args, data_names, params)
            input_names = out.list_inputs()
        data_indices = []
        param_indices = []
        self._cached_op_args = []
        for i, name in enumerate(input_names):
            if name in data_names:
                data_indices.append(i)
                self._cached_op_args.append((True, data_names[name]))
            else:
                param_indices.append(i)
                self._cached_op_args.append((False, params[name]))
        flags = [('data_indices', data_indices), ('param_indices', param_indices)] + \
            self._flags
        # optimize_for / hybridize(backend=...): the optimizing path; MXNet: an unknown
        # backend was logged by Symbol.optimize_for and the graph runs as it is
        if self._backend and is_known_backend(self._backend):
            flags.append(('backend', self._backend))
        self._cached_op = ndarray.CachedOp(out, flags)

    def _partitioned(self, out, args, data_names, params):
        """``out`` optimized for ``self._backend`` (``Symbol.optimize_for``) with the
        arrays of the inputs and Parameters (and the shapes of symbolic inputs); it
        becomes the cached graph."""
        ctx_set = _gather_type_ctx_info(list(args))[2]
        ctx = ctx_set.pop() if ctx_set else None
        arg_dict, aux_dict, input_shapes = {}, {}, {}
        for names, arrays in ((out.list_arguments(), arg_dict),
                              (out.list_auxiliary_states(), aux_dict)):
            for name in names:
                if name in data_names and data_names[name] < len(args):
                    arg = args[data_names[name]]
                    if isinstance(arg, NDArray):
                        arrays[name] = arg
                    elif isinstance(arg, symbol.Symbol) and '__shape__' in arg.list_attr():
                        shape = arg.list_attr()['__shape__'].strip('()').split(',')
                        input_shapes[name] = tuple(int(d) for d in shape if d.strip())
                elif name in params:
                    arrays[name] = params[name].data()
        out = out.optimize_for(self._backend, arg_dict, aux_dict, ctx, input_shapes,
                               **self._backend_opts)
        if is_np_array():
            out = out.as_np_ndarray()
        self._cached_graph = self._cached_graph[0], out
        return out

    def _deferred_infer_shape(self, *args):
        """Infer Parameter shapes from the inputs, as a ValueError when impossible."""
        try:
            self.infer_shape(*args)
        except Exception as e:  # noqa: BLE001 - MXNet turns any inference failure into this ValueError
            error_msg = "Deferred initialization failed because shape" \
                        " cannot be inferred. {}".format(e)
            raise ValueError(error_msg) from None

    def _check_in_format(self, fmt):
        """Raise when the call's argument structure differs from the cached one."""
        if fmt == self._in_format:
            return
        if len(self._in_format) > len(fmt):
            valid = all([self._in_format[i] == -1
                         for i in range(len(fmt), len(self._in_format))])
            valid = valid and (fmt == self._in_format[:len(fmt)])
        elif len(self._in_format) < len(fmt):
            valid = all([fmt[i] == -1 for i in range(len(self._in_format), len(fmt))])
            valid = valid and (fmt[:len(self._in_format)] == self._in_format)
        else:
            valid = False
        if not valid:
            raise ValueError("The argument structure of HybridBlock does not match"
                             " the cached version. Stored format = {}, input format = {}"
                             .format(fmt, self._in_format))

    def _call_cached_op(self, *args):
        """Run the compiled graph with the inputs and the Parameters' arrays."""
        if self._cached_op is None:
            self._build_cache(*args)
        assert self._cached_op, "Gluon failed to build the cache. " \
                                "This should never happen. " \
                                "Please submit an issue on Github" \
                                " https://github.com/apache/incubator-mxnet."
        args, fmt = _flatten(args, "input")
        self._check_in_format(fmt)
        args_without_none = [ele for ele in args if ele is not None]
        cargs = [args_without_none[i] if is_arg else i.data()
                 for is_arg, i in self._cached_op_args]
        if self._callback:
            if len(self._flags) >= 2 and (self._flags[1][1] or self._flags[0][1]):
                warnings.warn("register_op_hook is experimental when static_alloc=True / "
                              "static_shape=True  and may not work correctly")
            out = _run_with_op_hook(self._cached_op, cargs, self._callback, self._monitor_all)
        else:
            out = self._cached_op(*cargs)
        if isinstance(out, NDArray):
            out = [out]
        if self._cached_graph[1].__class__ is not symbol.Symbol:
            out = _to_np_outputs(list(out))
        return _regroup(out, self._out_format)

    def optimize_for(self, x, *args, backend=None, clear=False, static_alloc=False,
                     static_shape=False, inline_limit=2, forward_bulk_size=None,
                     backward_bulk_size=None, **kwargs):
        """Partitions the HybridBlock for a given backend without running it.

        Any backend name (``MKLDNN``, ``ONEDNN``, ``inductor``...) turns on mxtorch's
        optimizing inference path (BatchNorm folding, oneDNN prepacking, torch.compile,
        CUDA graphs; see ``mxtorch.graph.backends``).
        """
        if len(kwargs) > 0:
            self._backend_opts = kwargs
        if not backend:
            raise ValueError('Must specify "backend" to optimize_for')
        self.hybridize(True, backend, clear, static_alloc, static_shape,
                       inline_limit, forward_bulk_size, backward_bulk_size)
        has_symbol, has_ndarray, ctx_set, _ = _gather_type_ctx_info([x] + list(args))
        if not has_symbol and not has_ndarray:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the '
                             'input. Please check the type of the args.\n')
        if len(ctx_set) > 1:
            raise ValueError('Found multiple contexts in the input, '
                             'After hybridized, the HybridBlock only supports one input '
                             'context. You can print the ele.ctx in the '
                             'input arguments to inspect their contexts. '
                             'Find all contexts = {}'.format(ctx_set))
        self._build_cache(x, *args)

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                "Children of HybridBlock must also be HybridBlock, "
                "but %s has type %s. If you are using Sequential, "
                "please try HybridSequential instead." % (str(block), str(type(block))))
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Activates or deactivates :py:class:`HybridBlock` s recursively. Has no effect on
        non-hybrid children.

        Parameters
        ----------
        active : bool, default True
            Whether to turn hybrid on or off.
        backend : str
            The name of backend, as registered in `SubgraphBackendRegistry`, default None
        clear : bool, default True
            Clears any previous optimizations
        static_alloc : optional bool, default False
            Statically allocate memory to improve speed. Memory usage may increase.
        static_shape : optional bool, default False
            Optimize for invariant input shapes between iterations.
        inline_limit : optional int, default 2
            Maximum number of operators that can be inlined.
        forward_bulk_size : optional int, default None
            Segment size of bulk execution during forward pass.
        backward_bulk_size : optional int, default None
            Segment size of bulk execution during forward pass.
        **kwargs:  optional
            Backend options.
        """
        if len(kwargs) > 0:
            self._backend_opts = kwargs
        self._backend = backend
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        # MXNet: operator precedence makes pre-hooks warn even when active=False
        if active and self._forward_hooks or self._forward_pre_hooks:
            warnings.warn('"{block}" is being hybridized while still having forward hook/'
                          'pre-hook. If "{block}" is a child of HybridBlock, the hooks will '
                          'not take effect.'.format(block=self))
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        """Generic infer attributes."""
        inputs, out = self._get_graph(*args)
        args, _ = _flatten(args, "input")
        args_without_none = [ele for ele in args if ele is not None]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{i.name: getattr(j, attr) for i, j in zip(inputs, args_without_none)})
            if arg_attrs is None:
                raise ValueError(w[0].message)
        sdict = {i: j for i, j in zip(out.list_arguments(), arg_attrs)}
        sdict.update({name: attr for name, attr in
                      zip(out.list_auxiliary_states(), aux_attrs)})
        for i in self.collect_params().values():
            setattr(i, attr, sdict[i.name])

    def infer_shape(self, *args):
        """Infers shape of Parameters from inputs."""
        self._infer_attrs('infer_shape', 'shape', *args)

    def infer_type(self, *args):
        """Infers data type of Parameters from inputs."""
        self._infer_attrs('infer_type', 'dtype', *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Export HybridBlock to json format that can be loaded by
        `gluon.SymbolBlock.imports`, `mxnet.mod.Module` or the C++ interface.

        .. note:: When there are only one input, it will have name `data`. When there
                  Are more than one inputs, they will be named as `data0`, `data1`, etc.

        Parameters
        ----------
        path : str
            Path to save model. Two files `path-symbol.json` and `path-xxxx.params`
            will be created, where xxxx is the 4 digits epoch number.
        epoch : int
            Epoch number of saved model.
        """
        if not self._cached_graph:
            raise RuntimeError(
                "Please first call block.hybridize() and then run forward with "
                "this block at least once before calling export.")
        sym = self._cached_graph[1]
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for is_arg, param in self._cached_op_args:
            if is_arg:
                continue
            name = param.name
            if name in arg_names:
                arg_dict['arg:{}'.format(name)] = param._reduce()
            elif name not in aux_names:
                warnings.warn('Parameter "{name}" is not found in the graph. '
                              .format(name=name), stacklevel=3)
            else:
                arg_dict['aux:%s' % name] = param._reduce()
        # one set (see format.fileset): a reader never sees the new symbol with old params
        from ..format.fileset import write_set
        from ..model import _checkpoint_manifest
        write_set(_checkpoint_manifest(path, epoch),
                  [('%s-symbol.json' % path,
                    lambda fname: sym.save(fname, remove_amp_cast=remove_amp_cast)),
                   ('%s-%04d.params' % (path, epoch), lambda fname: save_arrays(fname, arg_dict))])

    def register_op_hook(self, callback, monitor_all=False):
        """Install op hook for block recursively.

        Parameters
        ----------
        callback : function
            Takes a string (node name), a string (operator name) and an NDArray.
        monitor_all : bool, default False
            If true, monitor both input and output, otherwise monitor output only.
        """
        self._callback = callback
        self._monitor_all = monitor_all
        for cld in self._children.values():
            cld._callback = callback
            cld._monitor_all = monitor_all

    def forward(self, x, *args):
        """Defines the forward computation. Arguments can be either
        :py:class:`NDArray` or :py:class:`Symbol`."""
        if isinstance(x, NDArray):
            ctx = x._ctx  # the common case: NDArray inputs only
            ctx_set = {ctx}
            for a in args:
                if not isinstance(a, NDArray):
                    break
                ctx_set.add(a._ctx)
            else:
                return self._forward_ndarray(ctx, ctx_set, x, *args)
        has_symbol, has_ndarray, ctx_set, first_ctx = _gather_type_ctx_info([x] + list(args))
        if has_symbol and has_ndarray:
            raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols'
                             ' types for the input. Please check the type of the args.\n')
        if not has_symbol and not has_ndarray:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the '
                             'input. Please check the type of the args.\n')
        if has_ndarray:
            return self._forward_ndarray(first_ctx, ctx_set, x, *args)
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            out = self.hybrid_forward(symbol, x, *args, **params)
        return _to_np_outputs(out) if is_np_array() else out

    def _forward_ndarray(self, ctx, ctx_set, x, *args):
        """NDArray forward: the cached graph when active, else ``hybrid_forward(nd)``."""
        if self._active:
            if len(ctx_set) > 1:
                raise ValueError('Find multiple contexts in the input, '
                                 'After hybridized, the HybridBlock only supports one input '
                                 'context. You can print the ele.ctx in the '
                                 'input arguments to inspect their contexts. '
                                 'Find all contexts = {}'.format(ctx_set))
            with ctx:
                return self._call_cached_op(x, *args)
        with ctx:
            try:
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            except DeferredInitializationError:
                self._deferred_infer_shape(x, *args)
                for _, v in self.params.items():
                    v._finish_deferred_init()
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            out = self.hybrid_forward(ndarray, x, *args, **params)
        return _to_np_outputs(out) if is_np_array() else out

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Overrides to construct symbolic graph for this `Block`.

        Parameters
        ----------
        x : Symbol or NDArray
            The first input tensor.
        *args : list of Symbol or list of NDArray
            Additional input tensors.
        """
        raise NotImplementedError

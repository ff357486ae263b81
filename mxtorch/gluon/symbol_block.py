"""``SymbolBlock``: a HybridBlock built from a Symbol (``SymbolBlock.imports``)."""
from __future__ import annotations

import copy

import numpy as np

from .. import symbol
from ..base import MXNetError
from ..ndarray import NDArray
from ..symbol import Symbol
from ..util import is_np_array
from .block import _flatten, _regroup
from .hybrid import HybridBlock
from .parameter import ParameterDict, mx_real_t

__all__ = ['SymbolBlock']

_ROW_SPARSE_ID = '1'  # MXNet: _STORAGE_TYPE_STR_TO_ID['row_sparse']


def _common_prefix(names):
    """Get the common prefix for all names."""
    if not names:
        return ''
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


def _infer_param_types(in_params, out_params, arg_params, aux_params, default_dtype=mx_real_t):
    """Infer the dtypes of the args and auxs of ``out_params`` from its input variables.

    Returns
    -------
    (arg_types, aux_types), each defaulting to ``default_dtype`` when inference fails.
    """
    arg_types = None
    aux_types = None
    input_sym_names = [in_param.name for in_param in in_params]
    input_sym_arg_types = []
    can_infer_input_type = True
    for in_param in in_params:
        input_sym_arg_type = in_param.infer_type()[0]
        if not input_sym_arg_type or len(input_sym_arg_type) < 1:
            can_infer_input_type = False
            break
        input_sym_arg_types.append(input_sym_arg_type[0])
    if can_infer_input_type:
        params = {k: v for k, v in zip(input_sym_names, input_sym_arg_types)}
        try:
            arg_types, _, aux_types = out_params.infer_type(**params)
        except MXNetError:
            arg_types, aux_types = None, None
    if arg_types is None or len(arg_types) != len(arg_params):
        arg_types = [default_dtype for _ in arg_params]
    if aux_types is None or len(aux_types) != len(aux_params):
        aux_types = [default_dtype for _ in aux_params]
    return (arg_types, aux_types)


class SymbolBlock(HybridBlock):
    """Construct block from symbol. This is useful for using pre-trained models
    as feature extractors.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
        The desired output for SymbolBlock.
    inputs : Symbol or list of Symbol
        The Variables in output's argument that should be used as inputs.
    params : ParameterDict
        Parameter dictionary for arguments and auxililary states of outputs
        that are not inputs.
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """Import model previously saved by `gluon.HybridBlock.export` or
        `Module.save_checkpoint` as a `gluon.SymbolBlock` for use in Gluon.

        Parameters
        ----------
        symbol_file : str
            Path to symbol file.
        input_names : list of str
            List of input variable names
        param_file : str, optional
            Path to parameter file.
        ctx : Context, default None
            The context to initialize `gluon.SymbolBlock` on.
        allow_missing : bool, default False
            Whether to silently skip loading parameters not represents in the file.
        ignore_extra : bool, default False
            Whether to silently ignore parameters from the file that are not
            present in this Block.

        Returns
        -------
        gluon.SymbolBlock
            `gluon.SymbolBlock` loaded from symbol and parameter files.
        """
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype=mx_real_t) for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        if is_np_array():
            # MXNet: in NumPy mode the graph is loaded as mx.sym.np._Symbol
            sym = sym.as_np_ndarray()
            inputs = [i.as_np_ndarray() for i in inputs]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source='saved')
        return ret

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        modstr = '{block} : {numinputs} -> {numoutputs}'.format(
            block=self._cached_graph[1], numinputs=len(self._cached_graph[0]),
            numoutputs=len(self._cached_graph[1].list_outputs()))
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for i in syms:
            assert len(i.get_internals().list_outputs()) == 1, \
                "Input symbols must be variable, but %s is an output of operators" % str(i)
            input_names.add(i.name)
        for i in out:
            for j in i.get_internals():
                assert j.attr("__storage_type__") != _ROW_SPARSE_ID, \
                    "SymbolBlock doesn't support Parameter '%s' because its storage " \
                    "type is 'row_sparse'." % j.name
        if len(out) > 1:
            np_mode = all(o.__class__ is not Symbol for o in out)
            out = symbol.Group(out).as_np_ndarray() if np_mode else symbol.Group(out)
        else:
            out = out[0]
        self._register_graph_params(syms, out, input_names)
        self._cached_graph = syms, out
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}

    def _register_graph_params(self, syms, out, input_names):
        """Create a (deferred) Parameter for every non-input argument and aux state."""
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for i, arg in enumerate(arg_params):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=arg_types[i])
        for i, aux in enumerate(aux_params):
            if aux not in input_names:
                self.params.get(aux, grad_req='null', allow_deferred_init=True,
                                dtype=aux_types[i])

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        assert isinstance(x, Symbol), \
            "HybridBlock requires the first argument to forward be either " \
            "Symbol or NDArray, but got %s" % type(x)
        args, in_fmt = _flatten([x] + list(args), "input")
        assert in_fmt == self._in_format, "Invalid input format"
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], args)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        tmp = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = tmp

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name == 'float16':
            # MXNet: BatchNorm statistics and affine parameters stay float32
            params_list = self._cached_graph[1].get_internals().list_inputs()
            for node in params_list:
                for var_suffix, mean_name in (('running_var', 'running_mean'),
                                              ('moving_var', 'moving_mean')):
                    if not node.endswith(var_suffix):
                        continue
                    prefix = node[:-len(var_suffix)]
                    sibs = [prefix + t for t in (mean_name, 'gamma', 'beta')]
                    if all(p in params_list for p in sibs):
                        self.params.get(node).cast('float32')
                        for sib in sibs:
                            self.params.get(sib).cast('float32')

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def reset_ctx(self, ctx):
        """Re-assign all Parameters to other contexts.

        Parameters
        ----------
        ctx : Context or list of Context, default :py:meth:`context.current_context()`.
            Assign Parameter to given context. If ctx is a list of Context, a
            copy will be made for each context.
        """
        params = self.collect_params()
        if self._cached_op:
            for _, p in self._cached_op_args:
                if not isinstance(p, int) and p.name not in params:
                    p.reset_ctx(ctx)
        for p in params.values():
            p.reset_ctx(ctx)

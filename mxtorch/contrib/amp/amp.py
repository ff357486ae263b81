"""Functions for enabling AMP (automatic mixed precision), as in MXNet 1.9.1.

Training: :func:`init` makes the operator functions of ``mx.nd`` and ``mx.sym`` cast their
inputs (``amp_cast``/``amp_multicast``) by MXNet's lists, so listed operators run in
float16/bfloat16 and overflow-prone ones in float32 while parameters stay float32;
:func:`init_trainer` and :func:`scale_loss` add dynamic loss scaling to a Gluon Trainer.
Inference: :func:`convert_symbol`, :func:`convert_model`, :func:`convert_hybrid_block` and
:func:`convert_bucketing_module` rewrite a float32 graph with the casts in it.

# MXNet: the casts are explicit graph nodes rather than ``torch.autocast``, because they
# must be visible in symbols and their JSON, follow MXNet's (user-overridable) lists and
# give MXNet's output dtypes; each cast is one torch ``Tensor.to`` whose backward casts the
# gradient back, which is what autocast does inside.
"""
from __future__ import annotations

import contextlib
import logging


from ... import ndarray, symbol
from ... import optimizer as opt
from ...base import DTYPE_MX_TO_NP, dtype_name, dtype_np
from ...context import gpu
from ...gluon import trainer
from ...symbol import Symbol
from . import lists
from .loss_scaler import LossScaler
from .reduce_precision import Lists, reduce_precision
from .wrap import BFLOAT16 as bfloat16  # noqa: N811 - MXNet's amp.bfloat16
from .wrap import cast_array, route_operators, wrap_loss_outputs, wrap_module

_LOG = logging.getLogger(__name__)

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops",
           "list_conditional_fp32_ops", "list_widest_type_cast", "list_loss_output_functions",
           "list_lp16_use_fp32_params", "convert_symbol"]

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None


def _target_name(target_dtype) -> str | None:
    """'float16' or 'bfloat16' for the spellings of AMP's target dtypes, else None."""
    if isinstance(target_dtype, str):
        return target_dtype if target_dtype in ("float16", "bfloat16") else None
    try:
        name = dtype_name(dtype_np(target_dtype))
    except (TypeError, ValueError, KeyError):
        return None
    return name if name in ("float16", "bfloat16") else None


def _table(target_dtype):
    """The list module for ``target_dtype`` (MXNet asserts on anything else)."""
    name = _target_name(target_dtype)
    assert name is not None, "not supported type"
    return lists.symbol_fp16 if name == "float16" else lists.symbol_bf16


def init(target_dtype='float16', target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Initialize AMP (automatic mixed precision).

    This needs to be done before model creation. Later calls do nothing.

    Parameters
    ----------
    target_dtype : {'float16', 'bfloat16'}
        Target low precision type for AMP. Currently only float16 and bfloat16 are supported.
    target_precision_ops : list of string
        Override the list of functions casted to target_dtype. Entries in this list
        are names of the functions casted to target_dtype.
    conditional_fp32_ops : list of (string, string, list of string)
        Override the list of functions conditionally casted to FP32. The format
        of the list is (name of the function, name of the parameter,
        list of values of the parameter that make the function be casted to FP32).
    fp32_ops : list of string
        Override the list of functions casted to FP32. Entries in this list
        are names of the functions casted to FP32.
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    name = _target_name(target_dtype)
    assert name is not None, "AMP currently supports only float16 or bfloat16 as a target_dtype"
    _amp_initialized = True
    _LOG.info("Using AMP")
    dtype = dtype_np(name)
    lp16 = target_precision_ops if target_precision_ops is not None else list_lp16_ops(dtype)
    fp32 = fp32_ops if fp32_ops is not None else list_fp32_ops(dtype)
    cond = conditional_fp32_ops if conditional_fp32_ops is not None \
        else list_conditional_fp32_ops(dtype)
    widest = list_widest_type_cast(dtype)
    for module in (symbol, ndarray):
        wrap_module(module, dtype, lp16, fp32, cond, widest, list_lp16_use_fp32_params(dtype))
    route_operators(set(lp16) | set(fp32) | {c[0] for c in cond} | set(widest))
    _loss_scaler = LossScaler()
    for module in (ndarray, symbol):
        wrap_loss_outputs(module, _loss_scaler, list_loss_output_functions(dtype))


def _check_trainer(optimizer_or_trainer) -> None:
    if isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    if not isinstance(optimizer_or_trainer, trainer.Trainer):
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or "
                        "an optimizer, instead is %s" % type(optimizer_or_trainer))


def init_trainer(optimizer_or_trainer):
    """Initialize trainer or optimizer to work with AMP dynamic loss scaling.

    Parameters
    ----------
    optimizer_or_trainer : Optimizer or Trainer
        MXNet Optimizer or Gluon trainer to initialize with AMP
    """
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        loss_scaler = _loss_scaler
    else:
        loss_scaler = LossScaler()
    _check_trainer(optimizer_or_trainer)
    optimizer_or_trainer._amp_loss_scaler = loss_scaler
    optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Scale the loss (an NDArray or a list of them) by the trainer's current loss scale,
    and make the trainer unscale the gradients by it at ``step``.

    Use as ``with amp.scale_loss(loss, trainer) as scaled: autograd.backward(scaled)``.
    """
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    assert scaler is not None, \
        'Loss scaler is not initialized, did you forget to call amp.init_trainer()?'
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [one * scaler.loss_scale for one in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer):
    """Check and unscale the gradients manually. This function should only be used
    if accessing gradients is necessary, e.g. for gradient clipping.

    Parameters
    ----------
    optimizer_or_trainer : Optimizer or Trainer
        MXNet optimizer or Gluon Trainer used when scaling the gradients
    """
    _check_trainer(optimizer_or_trainer)
    for p in optimizer_or_trainer._params:
        if p._grad is not None:
            for g in p._grad:
                g[:] *= optimizer_or_trainer._scale
    optimizer_or_trainer._scale = 1.


# ------------------------------------------------------------------------ conversion
def _resolve_lists(target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                   excluded_sym_names) -> Lists:
    """Check the user's lists as MXNet does and combine them with the defaults."""
    if target_dtype_ops is not None:
        assert isinstance(target_dtype_ops, list), "target_dtype_ops should be a list of strs"
    else:
        target_dtype_ops = list_lp16_ops(target_dtype)
    if fp32_ops is not None:
        assert isinstance(fp32_ops, list), "fp32_ops should be a list of strs"
    else:
        fp32_ops = list_fp32_ops(target_dtype)
    if conditional_fp32_ops is not None:
        assert isinstance(conditional_fp32_ops, list), "conditional_fp32_ops should be a list"
    else:
        conditional_fp32_ops = list_conditional_fp32_ops(target_dtype)
    conditional: dict = {}
    for row in conditional_fp32_ops:
        assert isinstance(row[0], str) and isinstance(row[1], str) and \
            isinstance(row[2], list), "conditional_fp32_ops should be a list of " \
                                      "(str, str, list of str)"
        conditional.setdefault(row[0], {}).setdefault(row[1], []).extend(row[2])
    if excluded_sym_names is not None:
        assert isinstance(excluded_sym_names, list), "excluded_sym_names should be a list of strs"
    _check_disjoint(target_dtype, target_dtype_ops, fp32_ops, list(conditional))
    return Lists(_target_name(target_dtype), set(target_dtype_ops),
                 set(fp32_ops), set(list_widest_type_cast(target_dtype)), conditional,
                 set(excluded_sym_names or []))


def _check_disjoint(target_dtype, lp16, fp32, conditional) -> None:
    for a, b, what in ((lp16, fp32, "target_dtype_ops and fp32_ops"),
                       (lp16, conditional, "target_dtype_ops and conditional_fp32_ops"),
                       (conditional, fp32, "fp32_ops and conditional_fp32_ops")):
        common = set(a) & set(b)
        assert not common, "Ops cannot be in two or more lists. " \
                           "Common ops in {} {}".format(what, common)
    known = set(list_lp16_ops(target_dtype) + list_fp32_ops(target_dtype) +
                list_lp16_fp32_ops(target_dtype) +
                [c[0] for c in list_conditional_fp32_ops(target_dtype)])
    illegal = set(lp16 + fp32 + conditional) - known
    assert not illegal, '''Can only choose ops from one of the three lists
                            for lp16_ops and fp32_ops
                            1. amp.list_lp16_ops(target_dtype)
                            2. amp.list_fp32_ops(target_dtype)
                            3. amp.list_lp16_fp32_ops(target_dtype)
                            4. amp.list_conditional_fp32_ops(target_dtype)
                            Op %s not in any of them''' % (illegal)


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """Given a symbol object representing a neural network of data type FP32 and target_dtype,
    add cast layers according to the op lists (target_dtype_ops, fp32_ops,
    conditional_fp32_ops) if provided, otherwise use the default
    lists provided by the framework.

    Parameters
    ----------
    sym : Symbol
        FP32 neural network symbol
    target_dtype : str or numpy, optional defaults to float16
        currently only supports float16 and bfloat16. The target dtype indicates to add cast
        layers when possible so that lower precision computation can be leveraged.
    target_dtype_ops : list of strs, optional
        Override the list of operator names casted to the target_dtype.
        If None, uses the framework's default list to be casted to target_dtype.
    fp32_ops : list of strs, optional
        Override the list of operator names casted to FP32.
        If None, uses the framework's default list to be casted to FP32.
    conditional_fp32_ops : list of (string, string, list of string), optional
        Override the list of functions to be casted to FP32.
        The format of the list is
        (name of the function, name of the parameter,
         list of values of the parameter that make the operator to be casted to FP32)
    excluded_sym_names : list of strs, optional
        A list of strings that represent the names of symbols that users want to exclude
        from being casted to LP16 or FP32.
    data_names : list of strs, optional
        A list of strings that represent input data tensor names to the model
    cast_optional_params : bool, default False
        Whether to cast the arg_params and aux_params that don't require to be in LP16
        because of a cast layer following it, but will reduce the computation and memory
        overhead of the model if casted.

    Returns
    -------
    Symbol
        The mixed precision symbol: float32 outputs, ``amp_cast``/``amp_multicast`` nodes.
    """
    assert isinstance(sym, Symbol), "First argument to convert_symbol should be Symbol"
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    if target_dtype == 'bfloat16':
        target_dtype = bfloat16
    table = _resolve_lists(target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                           excluded_sym_names)
    inputs = sym.list_inputs()
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in inputs if "__dtype__" not in attrs.get(n, {})]
    model_params = [n for n in dict.fromkeys(inputs) if n not in set(data_names)]
    heads = reduce_precision(sym._outputs, table, list(data_names), model_params,
                             bool(cast_optional_params))
    return Symbol(heads)


def _cast_params(params: dict, names, attr_dict: dict) -> None:
    """Cast each named parameter to the ``__dtype__`` the converted symbol gives it."""
    for name in names:
        text = attr_dict.get(name, {}).get("__dtype__")
        if text is None or text == "-1" or name not in params:
            continue
        typ = DTYPE_MX_TO_NP[int(text)]
        if typ == bfloat16:
            params[name] = cast_array(params[name], bfloat16)
        else:
            params[name] = params[name].astype(typ)


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """API for converting a model from FP32 model to a mixed precision model.
    MXNet tries to convert the FP32 model to mixed precision model by adding
    cast layers using amp_cast and amp_multicast operators which can be used for inference
    use cases. The decision on which cast layer to add is based on hardcoded lists for
    Automatic Mixed Precision in MXNet. These lists can be overridden by the user by
    providing their own lists using : targe_precision_ops, fp32_ops, widest_precision_ops,
    conditional_fp32_ops

    Parameters
    ----------
    sym : Symbol
        FP32 neural network symbol
    arg_params : dict
        Dictionary of name to `NDArray`.
    aux_params : dict
        Dictionary of name to `NDArray`.
    target_dtype : str
        Currently only supports float16 and bfloat 16. The target dtype indicates to add cast
        layers when possible so that lower precision computation can be leveraged.
    target_dtype_ops : list of strs
        Override the list of operator names casted to target_dtype.
        If None, uses the framework's default list to be casted to target dtype.
    fp32_ops : list of strs
        Override the lists of operator names casted to FP32.
        If None, uses the framework's default list to be casted to FP32.
    conditional_fp32_ops : list of (string, string, list of string)
        Override the list of operators to be casted to FP32.
        The format of the list is
        (name of the function, name of the parameter,
         list of values of the parameter that make the operator to be casted to
        fp32)
    excluded_sym_names : list of strs
        A list of strings that represent the names of symbols that users want to exclude
        from being executed in lower precision.
    cast_optional_params : bool, default False
        Whether to cast the arg_params and aux_params that don't require to be in LP16
        because of a cast layer following it, but will reduce the computation and memory
        overhead of the model if casted.

    Returns
    -------
    (Symbol, dict, dict)
        The converted symbol and the parameter dicts (updated in place), cast as it says.
    """
    if excluded_sym_names is None:
        excluded_sym_names = []
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    assert isinstance(sym, Symbol), "First argument to convert_model should be Symbol"
    assert isinstance(arg_params, dict), \
        "Second argument to convert_model should be a dict of name to ndarray"
    assert isinstance(aux_params, dict), \
        "Third argument to convert_model should be a dict of name to ndarray"
    param_names = set(arg_params) | set(aux_params)
    data_names = [n for n in dict.fromkeys(sym.list_inputs()) if n not in param_names]
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    attr_dict = sym.attr_dict()
    _cast_params(arg_params, sym.list_arguments(), attr_dict)
    _cast_params(aux_params, sym.list_auxiliary_states(), attr_dict)
    return sym, arg_params, aux_params


def _cast_block_params(block, sym) -> dict:
    """``arg:``/``aux:`` keyed copies of the block's parameters in the symbol's dtypes."""
    arg_names = set(sym.list_arguments())
    aux_names = set(sym.list_auxiliary_states())
    attr_dict = sym.attr_dict()
    arg_dict = {}
    for name, param in block.collect_params().items():
        if name in arg_names:
            key = "arg:%s" % name
        else:
            assert name in aux_names
            key = "aux:%s" % name
        arg_dict[key] = param._reduce()
        text = attr_dict.get(name, {}).get("__dtype__")
        if text is not None and text != "-1":
            arg_dict[key] = cast_array(arg_dict[key], bfloat16) \
                if DTYPE_MX_TO_NP[int(text)] == bfloat16 \
                else arg_dict[key].astype(DTYPE_MX_TO_NP[int(text)])
    return arg_dict


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None,
                         excluded_sym_names=None, ctx=gpu(0),
                         cast_optional_params=False):
    """Given a hybrid block/symbol block representing a FP32 model and a target_dtype,
    return a block with mixed precision support which can be used for inference use cases.

    Parameters
    ----------
    block : HybridBlock or SymbolBlock object
        FP32 HybridBlock or SymbolBlock object, hybridized and run forward at least once
    target_dtype : str or numpy
        currently only supports float16 and bfloat16. The target dtype indicates to add cast
        layers when possible so that lower precision computation can be leveraged.
    target_dtype_ops : list of strs
        Override the list of operator names casted to target_dtype.
        If None, uses the framework's default list to be casted to FP32.
    fp32_ops : list of strs
        Override the list of operator names casted to FP32.
    conditional_fp32_ops : list of (str, str, list of str)
        Override the list of functions to be casted to FP32.
        The format of the list is
        (name of the function, name of the parameter,
         list of values of the parameter that make the operator to be casted to FP32
    excluded_sym_names : list of strs
        A list of strings that represent the names of symbols that users want to exclude
        from being quantized
    ctx : Context
        Context on which model parameters should live
    cast_optional_params : bool, default False
        Whether to cast the arg_params and aux_params that don't require to be in LP16
        because of a cast layer following it, but will reduce the computation and memory
        overhead of the model if casted.

    Returns
    -------
    SymbolBlock
        The converted block, its parameters in the dtypes the converted graph gives them.
    """
    from ...gluon import HybridBlock, SymbolBlock
    assert isinstance(block, HybridBlock), "block input should be a HybridBlock"
    if not block._cached_graph:
        raise RuntimeError(
            "Please first call block.hybridize() and then run forward with "
            "this block at least once before calling export.")
    inputs, sym = block._cached_graph
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=[inp.name for inp in inputs],
                               cast_optional_params=cast_optional_params)
    arg_dict = _cast_block_params(block, converted)
    ret = SymbolBlock(converted, inputs)
    for key, param in ret.collect_params().items():
        for prefix in ("arg:", "aux:"):
            value = arg_dict.get(prefix + key)
            if value is not None and param.dtype != value.dtype:
                param.cast(value.dtype)
    ret.collect_params().load_dict(arg_dict, ctx=ctx)
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None,
                             excluded_sym_names=None, cast_optional_params=False):
    """Given a bucketing module cast the symbols associated with the BucketingModule
    and params if cast_optional_params is set.

    Parameters
    ----------
    bucketing_mod : BucketingModule instance
    target_dtype : str
        Currently only supports float16. The target dtype indicates to add cast layers
        when possible so that lower precision computation can be leveraged.
    target_dtype_ops : list of strs
        Override the list of operator names casted to target_dtype.
        If None, uses the framework's default list to be casted to target dtype.
    fp32_ops : list of strs
        Override the lists of operator names casted to FP32.
        If None, uses the framework's default list to be casted to FP32.
    conditional_fp32_ops : list of (string, string, list of string)
        Override the list of operators to be casted to FP32.
        The format of the list is
        (name of the function, name of the parameter,
         list of values of the parameter that make the operator to be casted to
        fp32)
    excluded_sym_names : list of strs
        A list of strings that represent the names of symbols that users want to exclude
        from being executed in lower precision.
    cast_optional_params : bool, default False
        Whether to cast the arg_params and aux_params that don't require to be in LP16
        because of a cast layer following it, but will reduce the computation and memory
        overhead of the model if casted.

    Returns
    -------
    BucketingModule
        A new module over the converted symbol of every bucket.
    """
    from ...module import BucketingModule
    assert isinstance(bucketing_mod, BucketingModule), \
        "module should be instance of bucketing module"
    assert len(bucketing_mod._buckets) > 0, "Bucketing Module should not be empty"
    assert bucketing_mod.params_initialized, \
        "bucketing_mod params should be initialized for mixed precision conversion"
    arg_params = bucketing_mod._curr_module._arg_params
    aux_params = bucketing_mod._curr_module._aux_params
    sym_dict = {}
    for key, val in bucketing_mod._buckets.items():
        sym_dict[key], arg_out, aux_out = convert_model(
            val._symbol, arg_params, aux_params, target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops,
            conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        sym_dict, sym_gen=bucketing_mod._sym_gen, arg_params=arg_out, aux_params=aux_out,
        default_bucket_key=bucketing_mod._default_bucket_key, logger=bucketing_mod.logger,
        context=bucketing_mod._context, work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)


# ------------------------------------------------------------------------ the lists
def list_lp16_ops(target_dtype):
    """Get the default list of LP16 ops for AMP
    """
    table = _table(target_dtype)
    return table.FP16_FUNCS if table is lists.symbol_fp16 else table.BF16_FUNCS


def list_fp32_ops(target_dtype):
    """Get the default list of FP32 ops for AMP
    """
    return _table(target_dtype).FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """Get the default list of ops which run in both LP16 and FP32
    """
    table = _table(target_dtype)
    return table.FP16_FP32_FUNCS if table is lists.symbol_fp16 else table.BF16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype):
    """Get the conditional fp32 ops list
    """
    return _table(target_dtype).CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """Get the widest type cast ops list
    """
    return _table(target_dtype).WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """Get loss function list
    """
    return _table(target_dtype).LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """ Get the params restrict for LP16

    """
    table = _table(target_dtype)
    return None if table is lists.symbol_fp16 else table.BF16_USE_FP32_PARAMS

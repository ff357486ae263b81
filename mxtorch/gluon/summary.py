"""``Block.summary``: the layer/shape/parameter table MXNet prints."""
from __future__ import annotations

from collections import OrderedDict

from .. import ndarray


def _shape_flatten(args):
    """Flatten nested lists/tuples of anything (used only for printing shapes)."""
    if not isinstance(args, (list, tuple)):
        return [args], int(0)
    flat = []
    fmts = []
    for i in args:
        arg, fmt = _shape_flatten(i)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _shape_regroup(args, fmt):
    """Inverse of :func:`_shape_flatten`."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for i in fmt:
        res, args = _shape_regroup(args, i)
        ret.append(res)
    return ret, args


def _get_shape_str(args):
    """The shapes of ``args`` as MXNet prints them."""
    flat_args, fmts = _shape_flatten(args)
    flat_arg_shapes = [x.shape if isinstance(x, ndarray.NDArray) else x for x in flat_args]
    shapes = _shape_regroup(flat_arg_shapes, fmts)[0]
    shape_str = str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)
    return shape_str.replace('L', '')


def _make_hook(summary, seen):
    """The forward hook that records one layer's row."""
    def _summary_hook(block, _, outputs):
        class_name = block.__class__.__name__
        block_idx = len(summary) - 1
        m_key = '%s-%i' % (class_name, block_idx + 1)
        summary[m_key] = OrderedDict()
        summary[m_key]['output_shape'] = _get_shape_str(outputs)
        params = 0
        summary[m_key]['trainable'] = 0
        summary[m_key]['shared'] = 0
        for p in block.params.values():
            params += p.data().size
            summary[m_key]['trainable'] += 0 if p.grad_req == 'null' else p.data().size
            if p in seen:
                summary[m_key]['shared'] += p.data().size
            else:
                seen.add(p)
        summary[m_key]['n_params'] = params
    return _summary_hook


def _sequential_types():
    """``(nn.Sequential, nn.HybridSequential)`` when the nn package defines them."""
    from . import nn
    return tuple(t for t in (getattr(nn, 'Sequential', None),
                             getattr(nn, 'HybridSequential', None)) if t is not None)


def _print_table(summary):
    """Print the table of the recorded rows."""
    line_format = '{:>20}  {:>42} {:>15}'
    print('-' * 80)
    print(line_format.format('Layer (type)', 'Output Shape', 'Param #'))
    print('=' * 80)
    total_params = 0
    trainable_params = 0
    shared_params = 0
    for layer in summary:
        print(line_format.format(layer, str(summary[layer]['output_shape']),
                                 summary[layer]['n_params']))
        total_params += summary[layer]['n_params']
        trainable_params += summary[layer]['trainable']
        shared_params += summary[layer]['shared']
    print('=' * 80)
    print('Parameters in forward computation graph, duplicate included')
    print('   Total params: ' + str(total_params))
    print('   Trainable params: ' + str(trainable_params))
    print('   Non-trainable params: ' + str(total_params - trainable_params))
    print('Shared params in forward computation graph: ' + str(shared_params))
    print('Unique parameters in model: ' + str(total_params - shared_params))
    print('-' * 80)


def run_summary(block, inputs):
    """Run ``block(*inputs)`` with hooks on every layer and print the summary table."""
    from .hybrid import HybridBlock
    summary = OrderedDict()
    seen = set()
    hooks = []
    seq_types = _sequential_types()
    hook = _make_hook(summary, seen)

    def _register_summary_hook(blk):
        assert not isinstance(blk, HybridBlock) or not blk._active, \
            '"{}" must not be hybridized to print summary.'.format(blk.name)
        if not isinstance(blk, seq_types):
            hooks.append(blk.register_forward_hook(hook))

    summary['Input'] = OrderedDict()
    summary['Input']['output_shape'] = _get_shape_str(inputs)
    summary['Input']['n_params'] = 0
    summary['Input']['trainable'] = 0
    summary['Input']['shared'] = 0
    try:
        block.apply(_register_summary_hook)
        block(*inputs)
        _print_table(summary)
    finally:
        for h in hooks:
            h.detach()

"""Docstrings of the ``mx.sym`` operator functions (``mx.symbol_doc``).

Every ``mx.sym.<op>`` docstring is built by :func:`_build_doc` from the operator's
registry entry: its description, a numpy-style ``Parameters`` section (inputs typed
``Symbol``, attributes with type and default), the ``name`` argument and ``Returns``.

Python-specific examples for an operator ``XXX`` live in a class ``XXXDoc`` deriving from
:class:`SymbolDoc` here, as its docstring; ``_build_doc`` appends it. The examples are
doctests, run by mxtorch's tests with the operators, ``SymbolDoc``, ``mx``, ``np`` and
``test_utils`` (``mx.test_utils``) in scope.
"""
from __future__ import annotations

import textwrap

from .base import build_param_doc as _build_param_doc

__all__ = ["SymbolDoc"]


class SymbolDoc:
    """The base class for attaching doc to operators."""

    @staticmethod
    def get_output_shape(sym, **input_shapes):
        """The output shapes of ``sym`` given its input shapes, by output name.

        Parameters
        ----------
        sym : Symbol
        **input_shapes
            A shape (tuple) for each input variable that inference needs.

        Returns
        -------
        dict of str to tuple
        """
        _, out_shapes, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), out_shapes))


class FullyConnectedDoc(SymbolDoc):
    """
    Examples
    --------
    The weight and bias are created as inputs named after the layer; their shapes follow
    from the data's:

    >>> fc = FullyConnected(data=Variable('x'), num_hidden=4, name='fc')
    >>> fc.list_arguments()
    ['x', 'fc_weight', 'fc_bias']
    >>> SymbolDoc.get_output_shape(fc, x=(2, 3))
    {'fc_output': (2, 4)}
    >>> fc.infer_shape(x=(2, 3))[0]
    [(2, 3), (4, 3), (4,)]

    With ``flatten=False`` only the last axis is transformed:

    >>> fc3 = FullyConnected(Variable('x'), num_hidden=4, flatten=False, name='fc3')
    >>> SymbolDoc.get_output_shape(fc3, x=(2, 5, 3))
    {'fc3_output': (2, 5, 4)}
    """


class ConvolutionDoc(SymbolDoc):
    """
    Examples
    --------
    A 3x3 convolution with padding 1 keeps the spatial size:

    >>> conv = Convolution(Variable('img'), kernel=(3, 3), pad=(1, 1), num_filter=8,
    ...                    name='conv')
    >>> SymbolDoc.get_output_shape(conv, img=(1, 3, 32, 32))
    {'conv_output': (1, 8, 32, 32)}
    >>> conv.infer_shape(img=(1, 3, 32, 32))[0][1]
    (8, 3, 3, 3)
    """


class ConcatDoc(SymbolDoc):
    """
    Examples
    --------
    Inputs are joined along ``dim``; the other dimensions must agree:

    >>> cat = Concat(Variable('a'), Variable('b'), dim=1, name='cat')
    >>> SymbolDoc.get_output_shape(cat, a=(2, 3), b=(2, 5))
    {'cat_output': (2, 8)}
    """


class FlattenDoc(SymbolDoc):
    """
    Examples
    --------
    Every axis but the first is collapsed, typically between a convolution and a
    fully connected layer:

    >>> flat = Flatten(Variable('data'), name='flat')
    >>> SymbolDoc.get_output_shape(flat, data=(2, 3, 4, 5))
    {'flat_output': (2, 60)}
    """


class ActivationDoc(SymbolDoc):
    """
    Examples
    --------
    >>> act = Activation(Variable('x'), act_type='relu', name='act')
    >>> x = np.array([[-1.0, 2.0], [0.5, -3.0]])
    >>> test_utils.simple_forward(act, x=x)
    array([[0. , 2. ],
           [0.5, 0. ]], dtype=float32)
    """


class PoolingDoc(SymbolDoc):
    """
    Examples
    --------
    >>> pool = Pooling(Variable('x'), kernel=(2, 2), stride=(2, 2), pool_type='max',
    ...                name='pool')
    >>> SymbolDoc.get_output_shape(pool, x=(1, 1, 4, 6))
    {'pool_output': (1, 1, 2, 3)}
    >>> gpool = Pooling(Variable('x'), kernel=(1, 1), global_pool=True, pool_type='avg',
    ...                 name='gpool')
    >>> SymbolDoc.get_output_shape(gpool, x=(2, 3, 7, 7))
    {'gpool_output': (2, 3, 1, 1)}
    """


class EmbeddingDoc(SymbolDoc):
    """
    Examples
    --------
    Map indices in [0, 10) to vectors of length 4; the output gains a last axis:

    >>> emb = Embedding(Variable('idx'), input_dim=10, output_dim=4, name='emb')
    >>> SymbolDoc.get_output_shape(emb, idx=(5, 2))
    {'emb_output': (5, 2, 4)}
    """


def _extra_doc(base: type, func_name: str) -> str:
    """The dedented docstring of ``<func_name>Doc`` among ``base``'s subclasses, or ''."""
    for cls in base.__subclasses__():
        if cls.__name__ == func_name + "Doc" and cls.__doc__:
            return "\n\n" + textwrap.dedent(cls.__doc__).strip("\n") + "\n"
    return ""


def _build_doc(func_name, desc, arg_names, arg_types, arg_desc, key_var_num_args=None,
               ret_type=None):
    """Build docstring for symbolic functions."""
    param_str = _build_param_doc(arg_names, arg_types, arg_desc)
    if key_var_num_args:
        desc += "\nThis function support variable length of positional input."
    doc_str = ("%s\n\n%s\nname : string, optional.\n    Name of the resulting symbol.\n\n"
               "Returns\n-------\nSymbol\n    The result symbol." % (desc, param_str))
    doc_str += _extra_doc(SymbolDoc, func_name)
    return doc_str.replace("NDArray-or-Symbol", "Symbol")

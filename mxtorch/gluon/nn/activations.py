"""Activation layers: ``Activation``, ``LeakyReLU``, ``PReLU``, ``ELU``, ``SELU``,
``Swish`` and ``GELU``, as in MXNet 1.9.1's ``gluon.nn.activations``."""
from __future__ import annotations

from ... import initializer
from ..block import HybridBlock

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    r"""Applies an activation function to input.

    Parameters
    ----------
    activation : str
        Name of activation function to use: ``'relu'``, ``'sigmoid'``, ``'tanh'``,
        ``'softrelu'`` or ``'softsign'``.

    Inputs:
        - **data**: input tensor with arbitrary shape.

    Outputs:
        - **out**: output tensor with the same shape as `data`.
    """

    def __init__(self, activation, **kwargs):
        # The prefix is derived from the activation name, so set it before Block.__init__.
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        """Prefix hint: the activation name (``relu0_``)."""
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '{name}({act})'.format(name=self.__class__.__name__, act=self._act_type)


class LeakyReLU(HybridBlock):
    r"""Leaky version of a Rectified Linear Unit: ``x if x > 0 else alpha * x``.

    Parameters
    ----------
    alpha : float
        Slope coefficient for the negative half axis. Must be >= 0.
    """

    def __init__(self, alpha, **kwargs):
        assert alpha >= 0, "Slope coefficient for LeakyReLU must be no less than 0."
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return '{name}({alpha})'.format(name=self.__class__.__name__, alpha=self._alpha)


class PReLU(HybridBlock):
    r"""Parametric leaky ReLU: ``x if x > 0 else alpha * x`` with a learned `alpha`.

    Parameters
    ----------
    alpha_initializer : Initializer
        Initializer for the `alpha` parameter (``Constant(0.25)``).
    in_channels : int, default 1
        Number of channels (alpha parameters) to learn. Must be 1 or the channel count
        of the input (axis 1).
    """

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,),
                                         init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    r"""Exponential Linear Unit: ``x if x > 0 else alpha * (exp(x) - 1)``.

    Parameters
    ----------
    alpha : float, default 1.0
        The alpha parameter of the ELU.
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        # MXNet: ELU passes no ``name='fwd'`` (its symbol node gets an automatic name).
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    r"""Scaled Exponential Linear Unit (SELU), Klambauer et al. 2017."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    r"""Gaussian Exponential Linear Unit (GELU), Hendrycks & Gimpel 2016 (erf form)."""

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    r"""Swish activation: ``x * sigmoid(beta * x)``.

    Parameters
    ----------
    beta : float, default 1.0
        The beta parameter of the Swish.
    """

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')

"""Contrib optimizers (``mx.optimizer.contrib``): GroupAdaGrad."""
from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import Optimizer

register = Optimizer.register

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """Adagrad optimizer with row-wise learning rates.

    This optimizer updates each weight by::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        div = grad / sqrt(history + float_stable_eps)
        weight -= div * lr

    Weight decay is not supported.

    Parameters
    ----------
    eps : float, optional
        Initial value of the history accumulator. Avoids division by 0.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        assert len(weight.shape) == 2
        return nd.zeros((weight.shape[0], 1), weight.context)

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        assert wd == 0, 'Weight decay is not supported for GroupAdaGrad'
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        state[:] += nd.mean(nd.square(grad), axis=1, keepdims=True)
        div = lr * grad / nd.sqrt(state + self.float_stable_eps)
        weight[:] -= div

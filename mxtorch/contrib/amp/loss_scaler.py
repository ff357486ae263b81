"""Dynamic loss scaling for AMP, with MXNet 1.9.1's schedule."""
from __future__ import annotations

import logging

from ... import autograd
from ... import ndarray as nd

_LOG = logging.getLogger(__name__)

__all__ = ["LossScaler"]

# MXNet: the arrays checked by one multi_all_finite call.
_CHUNK = 200


class LossScaler:
    """Dynamic loss scaler for AMP.

    The loss is multiplied by ``loss_scale`` (2**16 at first) before backward. When a step's
    gradients hold an inf or NaN the step is skipped and the scale halves; after 2000
    consecutive clean steps it doubles, up to 2**24.

    # MXNet: a new scale takes effect one step late: ``has_overflow`` first adopts the scale
    # decided at the previous check, so the step being checked is always unscaled by the
    # factor its loss was multiplied by.

    Properties
    ----------
    loss_scale : float
        The current loss scale
    """

    def __init__(self):
        self._loss_scale = 2.0 ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        return self._loss_scale

    def has_overflow(self, params) -> bool:
        """Check the gradients of ``params`` (Gluon Parameters) for inf/NaN and update the
        scale schedule; True when the step must be skipped."""
        grads = [p._grad[0] for p in params if p._grad is not None]
        overflow = False
        with autograd.pause():
            for i in range(0, len(grads), _CHUNK):
                chunk = grads[i:i + _CHUNK]
                if not nd.multi_all_finite(*chunk, num_arrays=len(chunk)).asscalar():
                    overflow = True
                    break
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            _LOG.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            _LOG.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow

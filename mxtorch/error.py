"""``mx.error``: MXNet's error classes and their registry.

``register`` maps an error name to the Python class raised for it; MXNet registers
``InternalError`` and the built-in ``ValueError``, ``TypeError``, ``AttributeError``,
``IndexError`` and ``NotImplementedError``.
"""
from __future__ import annotations

from .base import MXNetError, error_types, register_error

__all__ = ["MXNetError", "register", "InternalError", "error_types"]

register = register_error


@register_error
class InternalError(MXNetError):
    """Internal error in the system (a bug of the library, not of the caller)."""

    def __init__(self, msg: str):
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue in "
                    "https://github.com/apache/incubator-mxnet/issues/new/choose"
                    " to report it.")
        super().__init__(msg)


register_error("ValueError", ValueError)
register_error("TypeError", TypeError)
register_error("AttributeError", AttributeError)
register_error("IndexError", IndexError)
register_error("NotImplementedError", NotImplementedError)

"""``mx.log``: MXNet's logger with glog-style, colored one-letter level prefixes."""
from __future__ import annotations

import logging
import warnings

__all__ = ["get_logger", "getLogger", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG",
           "NOTSET"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    """``W0505 00:29:47 3525 file.py:func:1] message``, colored by level."""

    def __init__(self) -> None:
        super().__init__(datefmt="%m%d %H:%M:%S")

    @staticmethod
    def _get_color(level: int) -> str:
        if level >= logging.WARNING:
            return "\x1b[31m"
        if level >= logging.INFO:
            return "\x1b[32m"
        return "\x1b[34m"

    @staticmethod
    def _get_label(level: int) -> str:
        return _LABELS.get(level, "U")

    def format(self, record: logging.LogRecord) -> str:
        fmt = self._get_color(record.levelno) + self._get_label(record.levelno)
        fmt += "%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m"
        fmt += " %(message)s"
        self._style._fmt = fmt
        return super().format(record)


def as_logger(logger):
    """The Logger a ``logger=`` argument names (Module, FeedForward, executor managers).

    MXNet's default for these arguments is the ``logging`` module itself, whose module-level
    ``logging.info`` installs a root handler when none exists; a script configuring logging
    afterwards (``logging.basicConfig(level=logging.DEBUG)``) then changes nothing.
    """
    # MXNet: ``logger=logging`` logs on the root logger ("INFO:root:Epoch[0] ..."); its
    # Logger object emits the same records, without the module functions' implicit
    # basicConfig.
    return logging.getLogger() if logger is None or logger is logging else logger


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Deprecated alias of :func:`get_logger`."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.",
                  DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """Get a customized logger.

    Parameters
    ----------
    name : str, optional
        Name of the logger. A named logger gets one handler the first time it is asked for.
    filename : str, optional
        The file the logger writes to (no colors); stderr when None.
    filemode : str, optional
        Mode to open ``filename`` with; 'a' by default.
    level : int, optional
        The ``logging`` level of the logger.

    Returns
    -------
    logging.Logger
    """
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True
        if filename:
            hdlr: logging.Handler = logging.FileHandler(filename, filemode or "a")
        else:
            hdlr = logging.StreamHandler()
            hdlr.setFormatter(_Formatter())
        logger.addHandler(hdlr)
        logger.setLevel(level)
    return logger

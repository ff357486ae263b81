"""Optimizer API of MXNet (``mx.optimizer``)."""
from . import optimizer
from .optimizer import Optimizer, register, create
from .sgd import SGD, ccSGD, NAG, Signum, LARS, DCASGD, SGLD
from .adaptive import Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, FTML, LAMB, Test
from .updater import Updater, get_updater
from . import contrib
from .contrib import GroupAdaGrad
from ..ndarray import abs as NDabs  # noqa: F401  (MXNet exports it from mx.optimizer)

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LARS',
           'NAG', 'NDabs', 'Nadam', 'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum', 'LAMB',
           'Test', 'Updater', 'ccSGD', 'create', 'get_updater', 'register', 'contrib']

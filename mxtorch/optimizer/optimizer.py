"""``mx.optimizer.optimizer``: every optimizer, ``Updater`` and ``get_updater``.

MXNet 1.9.1 defines all of them in this one module; mxtorch defines them by family
(``base``, ``sgd``, ``lbsgd``, ``adaptive``, ``updater``) and gathers them here, under the
module path MXNet code and pickled MXNet optimizers name.
"""
from .base import Optimizer, register, create
from .sgd import SGD, ccSGD, NAG, Signum, LARS, DCASGD, SGLD
from .lbsgd import LBSGD
from .adaptive import Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax, Nadam, FTML, LAMB, Test
from .updater import Updater, get_updater
from ..ndarray import abs as NDabs  # MXNet's module exports it

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LARS', 'LAMB',
           'LBSGD', 'NAG', 'NDabs', 'Nadam', 'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum',
           'Test',
           'Updater', 'ccSGD', 'create', 'get_updater', 'register']

"""SVRG optimization (``mx.contrib.svrg_optimization``): ``SVRGModule`` trains with
stochastic variance-reduced gradients, helped by ``_SVRGOptimizer``."""
from . import svrg_module
from . import svrg_optimizer

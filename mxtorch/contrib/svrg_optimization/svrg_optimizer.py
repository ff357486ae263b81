"""The optimizers SVRGModule installs: ``_SVRGOptimizer`` sends the update of a parameter
to the user's optimizer, and that of its full-gradient key (``<name>_full``) to
``_AssignmentOptimizer``, which stores the pushed gradient as the value."""
from __future__ import annotations

from ... import optimizer as opt

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# the arguments of the Optimizer base class; the rest belong to the wrapped optimizer
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Sets the weight to the gradient: how SVRGModule accumulates full gradients in a
    KVStore (it pushes them to the ``<name>_full`` keys)."""

    def update(self, index, weight, grad, state):
        """``weight[:] = grad``."""
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Wraps the optimizer given to ``SVRGModule.init_optimizer`` and an
    ``_AssignmentOptimizer``: keys whose name contains ``full`` go to the latter.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer for the model's parameters; a name is created with all of
        ``kwargs``.
    kwargs
        ``Optimizer`` arguments (this optimizer keeps the base class's ones).
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The arguments among ``kwargs`` that the Optimizer base class takes."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index):
        """The parameter name of ``index`` (an index, or already a name)."""
        if index in self.idx2name.values():
            return index
        return self.idx2name[index]

    def _target(self, index):
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def update(self, index, weight, grad, state):
        """Update through the assignment optimizer for ``*full*`` keys, else the default."""
        self._target(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        """The state of whichever optimizer updates ``index``."""
        return self._target(index).create_state(index, weight)

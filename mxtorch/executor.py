"""``mx.executor``: the Executor class (see ``mxtorch.graph.executor``)."""
from .graph.executor import Executor

__all__ = ["Executor"]

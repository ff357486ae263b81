"""Graph layer: Symbol -> GraphProgram (torch.fx), shape/type passes, Executor, CachedOp."""
from .compile import GraphProgram
from .cached_op import CachedOp
from .executor import Executor

__all__ = ["GraphProgram", "CachedOp", "Executor"]

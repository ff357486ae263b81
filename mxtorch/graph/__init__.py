"""Graph layer: Symbol -> GraphProgram (torch.fx), shape/type passes, Executor."""
from .compile import GraphProgram
from .executor import Executor

__all__ = ["GraphProgram", "Executor"]

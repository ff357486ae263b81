"""Graph layer: the graph IR -> GraphProgram (torch.fx), shape/type passes, partitioning."""
from .compile import GraphProgram

__all__ = ["GraphProgram"]

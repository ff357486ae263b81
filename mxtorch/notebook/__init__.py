"""Training visualization for Jupyter notebooks (``mx.notebook``).

``mx.notebook.callback`` logs training statistics into pandas DataFrames and draws live
bokeh charts; pandas and bokeh are optional dependencies, imported when a logger or chart
is created (an ``ImportError`` naming the missing package is raised then).
"""
from . import callback

__all__ = ["callback"]

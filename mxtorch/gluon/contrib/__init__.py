"""Contributed Gluon components (``mx.gluon.contrib``)."""
from . import nn

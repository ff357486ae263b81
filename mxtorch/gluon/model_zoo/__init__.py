"""Predefined and pretrained models (``mx.gluon.model_zoo``).

Architectures are built here; pretrained weights come from parameter files the user
already has (mxtorch never downloads), see :func:`model_store.get_model_file`.
"""
from . import model_store
from . import vision

__all__ = ['model_store', 'vision']

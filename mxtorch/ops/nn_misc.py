"""Dropout, softmax family, UpSampling, BilinearSampler, GridGenerator, ROIPooling."""
from __future__ import annotations

"""Neural-network operators: FullyConnected, Convolution, Deconvolution, Pooling, Activation, LeakyReLU."""
from __future__ import annotations

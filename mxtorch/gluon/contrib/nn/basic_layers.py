"""Contributed basic layers, as in MXNet 1.9.1's ``gluon.contrib.nn.basic_layers``."""
from __future__ import annotations

import warnings

from .... import context
from .... import ndarray as nd
from ...block import Block, HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding',
           'SyncBatchNorm', 'PixelShuffle1D', 'PixelShuffle2D',
           'PixelShuffle3D']


class Concurrent(Sequential):
    """Lays `Block` s concurrently: every child gets the same input and their
    outputs are concatenated along `axis`.

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        out = [block(x) for block in self._children.values()]
        return nd.concat(*out, dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Lays `HybridBlock` s concurrently: every child gets the same input and their
    outputs are concatenated along `axis`.

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        out = [block(x) for block in self._children.values()]
        return F.concat(*out, dim=self.axis)


class Identity(HybridBlock):
    """Block that passes through the input directly (useful in `HybridConcurrent`)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    r"""Turns non-negative integers (indexes/tokens) into dense vectors of fixed size,
    with a 'row_sparse' weight and gradient.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary, i.e. maximum integer index + 1.
    output_dim : int
        Dimension of the dense embedding.
    dtype : str or np.dtype, default 'float32'
        Data type of output embeddings.
    weight_initializer : Initializer
        Initializer for the `embeddings` matrix.
    """

    def __init__(self, input_dim, output_dim, dtype='float32',
                 weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim,
                        'dtype': dtype, 'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype='row_sparse', stype='row_sparse')

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=self.__class__.__name__, **self._kwargs)


class SyncBatchNorm(BatchNorm):
    """Cross-GPU synchronized batch normalization (Zhang et al., 2018).

    In one process the statistics are those of the local batch, so this is
    :class:`BatchNorm` on axis 1 with the same parameters.

    Parameters
    ----------
    in_channels : int, default 0
        Number of channels (feature maps) in input data; 0 infers it.
    num_devices : int, default number of visible GPUs (at least 1)
        Number of devices the batch is split over.
    momentum, epsilon, center, scale, use_global_stats, beta_initializer,
    gamma_initializer, running_mean_initializer, running_variance_initializer :
        As in :class:`BatchNorm`.
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats,
                         beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        self._kwargs = {'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats,
                        'ndev': num_devices, 'key': self.prefix}

    def _get_num_devices(self):
        """Number of GPUs (at least 1), with MXNet's warning."""
        warnings.warn("Caution using SyncBatchNorm: "
                      "if not using all the GPUs, please mannually set num_devices",
                      UserWarning)
        num_devices = context.num_gpus()
        return num_devices if num_devices > 0 else 1

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        # One process holds the whole batch: synchronized statistics are local ones.
        kwargs = {k: v for k, v in self._kwargs.items() if k not in ('ndev', 'key')}
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                           axis=1, **kwargs)


def _factors(factor, ndim: int) -> tuple:
    """`factor` as an `ndim`-tuple of ints (an int is repeated)."""
    try:
        return (int(factor),) * ndim
    except TypeError:
        factors = tuple(int(fac) for fac in factor)
        assert len(factors) == ndim, "wrong length {}".format(len(factors))
        return factors


class PixelShuffle1D(HybridBlock):
    r"""Pixel-shuffle layer for upsampling in 1 dimension:
    ``(N, f*C, W) -> (N, C, W*f)``.

    Parameters
    ----------
    factor : int or 1-tuple of int
        Upsampling factor, applied to the ``W`` dimension.
    """

    def __init__(self, factor):
        super().__init__()
        self._factor = int(factor)

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))  # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))     # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))      # (N, C, W*f)

    def __repr__(self):
        return "{}({})".format(self.__class__.__name__, self._factor)


class PixelShuffle2D(HybridBlock):
    r"""Pixel-shuffle layer for upsampling in 2 dimensions:
    ``(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)``.

    Parameters
    ----------
    factor : int or 2-tuple of int
        Upsampling factors, applied to the ``H`` and ``W`` dimensions.
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))  # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))    # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))        # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))           # (N, C, H*f1, W*f2)

    def __repr__(self):
        return "{}({})".format(self.__class__.__name__, self._factors)


class PixelShuffle3D(HybridBlock):
    r"""Pixel-shuffle layer for upsampling in 3 dimensions:
    ``(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``.

    Parameters
    ----------
    factor : int or 3-tuple of int
        Upsampling factors, applied to the ``D``, ``H`` and ``W`` dimensions.
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2 * f3, 0, 0, 0))    # (N, C, f1, f2*f3, D, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 3, 5, 6))            # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, -4, f2, f3, 0, 0))        # (N, C, D*f1, f2, f3, H, W)
        x = F.transpose(x, (0, 1, 2, 5, 3, 6, 4))            # (N, C, D*f1, H, f2, W, f3)
        return F.reshape(x, (0, 0, 0, -3, -3))               # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return "{}({})".format(self.__class__.__name__, self._factors)

"""Statistical and matrix helpers of ``mx.test_utils`` (re-exported there): checks that a
random generator follows its distribution, and well-conditioned test matrices."""
from __future__ import annotations

import numpy as np

__all__ = ["gen_buckets_probs_with_ppf", "mean_check", "var_check", "chi_square_check",
           "verify_generator", "new_matrix_with_real_eigvals_2d",
           "new_matrix_with_real_eigvals_nd", "new_orthonormal_matrix_2d",
           "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd"]


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets from a quantile function.

    Returns
    -------
    (list of (float, float), list of float)
        The buckets and their probabilities (each ``1 / nbuckets``).
    """
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within ``mu +- 3 sigma / sqrt(n)``."""
    sample_mean = np.array(generator(nsamples)).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < sample_mean < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance lies within ``sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))``."""
    sample_var = np.array(generator(nsamples)).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < sample_var < sigma ** 2 + bound)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Parameters
    ----------
    generator : function
        ``generator(N)`` returns N i.i.d. samples.
    buckets : list of (low, high) or list of values
        Ascending, non-overlapping ranges of a continuous distribution, or every value
        of a discrete one.
    probs : list of float
        The probability of each bucket.
    nsamples : int

    Returns
    -------
    (float, np.ndarray, np.ndarray)
        The p value, the observed and the expected frequencies.
    """
    import scipy.stats as ss
    assert isinstance(buckets, list)
    samples = generator(nsamples)
    assert len(probs) == len(buckets)
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros((len(buckets) * 2,), dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            assert low <= high
            if i < len(buckets) - 1:
                assert high <= buckets[i + 1][0]
            edges[2 * i], edges[2 * i + 1] = low, high
        bucket_ids = np.searchsorted(edges, samples, side="right") // 2
    else:
        bucket_ids = np.array(samples)
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    obs_freq = np.zeros(shape=len(buckets), dtype=np.int64)
    for i, bucket in enumerate(buckets):
        obs_freq[i] = (bucket_ids == (i if continuous else bucket)).sum()
    _, p = ss.chisquare(f_obs=obs_freq, f_exp=expected_freq)
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5,
                     success_rate=0.2, alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; fail unless at least
    ``success_rate`` of the runs have ``p > alpha``.

    Returns
    -------
    list of float
        The p values.
    """
    results = [chi_square_check(generator=generator, buckets=buckets, probs=probs,
                                nsamples=nsamples) for _ in range(nrepeat)]
    cs_ret_l = [r[0] for r in results]
    success_num = (np.array(cs_ret_l) > alpha).sum()
    if success_num < nrepeat * success_rate:
        raise AssertionError(
            "Generator test fails, Chi-square p=%s, obs_freq=%s, expected_freq=%s."
            "\nbuckets=%s, probs=%s" % (str(cs_ret_l), str([r[1] for r in results]),
                                       str([r[2] for r in results]), str(buckets), str(probs)))
    return cs_ret_l


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned ``n x n`` matrix with small real eigenvalues."""
    shape = (n, n)
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, shape[-1]))
        eye = np.eye(shape[-1]).reshape(shape)
        v = np.random.uniform(-1., 1., shape[-1]).reshape(shape[:-1] + (1,))
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        householder = eye - 2 * np.matmul(v, np.swapaxes(v, -1, -2))
        q = np.matmul(householder, d)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]
                    ).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random orthonormal ``n x n`` matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n x n`` matrix with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, d), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]
                    ).reshape(shape)

"""``gluon.data.DataLoader``: mini-batches from a Dataset, in-process or with worker pools.

With ``num_workers > 0`` a ``multiprocessing.Pool`` (or a ``ThreadPool`` when
``thread_pool=True``) runs ``batchify_fn`` on the workers. Process workers send their
batches back as NumPy arrays (a small picklable tree), which the main process turns into
NDArrays; an exception raised in a worker is re-raised in the main process, and a worker
that does not answer within ``timeout`` seconds raises ``multiprocessing.TimeoutError``.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import pickle
import signal
import time
from multiprocessing.pool import ThreadPool

import numpy as np

from . import sampler as _sampler
from ... import context
from ... import ndarray as nd
from ... import numpy as _mx_np
from ...base import MXNetError
from ...util import is_np_array, is_np_shape, set_np

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data):
    """Collate data into batch (``mx.np.ndarray`` batches under NumPy array semantics)."""
    if isinstance(data[0], nd.NDArray):
        return _mx_np.stack(data) if is_np_array() else nd.stack(*data)
    if isinstance(data[0], tuple):
        data = zip(*data)
        return [default_batchify_fn(i) for i in data]
    data = np.asarray(data)
    array_fn = _mx_np.array if is_np_array() else nd.array
    return array_fn(data, dtype=data.dtype)


def default_mp_batchify_fn(data):
    """Collate data into batch in a worker process (same result as `default_batchify_fn`)."""
    # MXNet: stacks into 'cpu_shared' memory; here workers send NumPy back instead.
    return default_batchify_fn(data)


def _as_in_context(data, ctx):
    """Move data into new context."""
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class _NDArrayPayload:
    """An NDArray crossing a process boundary as a NumPy array (``np_array``: it was an
    ``mx.np.ndarray``)."""

    __slots__ = ("array", "np_array")

    def __init__(self, array: np.ndarray, np_array: bool = False):
        self.array = array
        self.np_array = np_array


def _to_payload(data):
    """Replace NDArrays in a batch tree by NumPy payloads."""
    if isinstance(data, nd.NDArray):
        return _NDArrayPayload(data.asnumpy(), isinstance(data, _mx_np.ndarray))
    if isinstance(data, list):
        return [_to_payload(d) for d in data]
    if isinstance(data, tuple):
        return tuple(_to_payload(d) for d in data)
    if isinstance(data, dict):
        return {k: _to_payload(v) for k, v in data.items()}
    return data


def _from_payload(data):
    """Turn NumPy payloads of a batch tree back into NDArrays."""
    if isinstance(data, _NDArrayPayload):
        array_fn = _mx_np.array if data.np_array else nd.array
        return array_fn(data.array, dtype=data.array.dtype)
    if isinstance(data, list):
        return [_from_payload(d) for d in data]
    if isinstance(data, tuple):
        return tuple(_from_payload(d) for d in data)
    if isinstance(data, dict):
        return {k: _from_payload(v) for k, v in data.items()}
    return data


_worker_dataset = None


def _worker_initializer(dataset, active_shape=False, active_array=False):
    """Initializer for processing pool (the dataset, and the parent's NumPy semantics)."""
    global _worker_dataset
    _worker_dataset = dataset
    set_np(shape=active_shape, array=active_array)


def _thread_worker_initializer(active_shape, active_array):
    """Initializer for ThreadPool: the NumPy semantics are per thread."""
    set_np(shape=active_shape, array=active_array)


def _worker_fn(samples, batchify_fn, dataset=None):
    """Function for processing data in worker process."""
    batch = batchify_fn([_worker_dataset[i] for i in samples])
    return pickle.dumps(_to_payload(batch), pickle.HIGHEST_PROTOCOL)


def _thread_worker_fn(samples, batchify_fn, dataset):
    """Threadpool worker function for processing data."""
    return batchify_fn([dataset[i] for i in samples])


_TIMEOUT_MSG = """Worker timed out after {} seconds. This might be caused by \n
            - Slow transform. Please increase timeout to allow slower data loading in each worker.
            """


class _MultiWorkerIter:
    """Internal multi-worker iterator for DataLoader."""

    def __init__(self, worker_pool, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=_worker_fn, prefetch=0, dataset=None,
                 data_loader=None, timeout=120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        """Assign next batch workload to workers."""
        r = next(self._iter, None)
        if r is None:
            return
        async_ret = self._worker_pool.apply_async(
            self._worker_fn, (r, self._batchify_fn, self._dataset))
        self._data_buffer[self._sent_idx] = async_ret
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            assert not self._data_buffer, "Data buffer should be empty at this moment"
            raise StopIteration
        ret = self._data_buffer.pop(self._rcvd_idx)
        try:
            self._wait(ret)
            if self._dataset is None:
                batch = _from_payload(pickle.loads(ret.get(0)))
            else:
                batch = ret.get(0)
        except multiprocessing.TimeoutError:
            msg = _TIMEOUT_MSG.format(self._timeout)
            if not isinstance(self._worker_pool, ThreadPool):
                msg += ("- Insufficient shared_memory if `timeout` is large enough.\n"
                        "Please consider reduce `num_workers` or increase shared_memory.\n")
            print(msg)
            raise
        except Exception:
            self._worker_pool.terminate()
            raise
        if self._pin_memory:
            batch = _as_in_context(batch, context.cpu_pinned(self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def _wait(self, ret) -> None:
        """Wait up to ``timeout`` seconds for ``ret``; raise as soon as a worker process
        has died (a killed worker's batch would never come)."""
        workers = getattr(self._data_loader, "_worker_procs", ())
        deadline = time.monotonic() + self._timeout
        while not ret.ready():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise multiprocessing.TimeoutError()
            ret.wait(min(remaining, _DEATH_POLL_S))
            if ret.ready():
                return
            for proc in workers:
                if proc.exitcode is not None:
                    raise MXNetError(_death_message(proc))

    def next(self):
        return self.__next__()

    def __iter__(self):
        return self


_DEATH_POLL_S = 0.1   # how often a waiting consumer checks that its workers are alive


def _death_message(proc) -> str:
    """Why a worker process is gone: its exit code, or the signal that killed it."""
    code = proc.exitcode
    how = f"exit code {code}"
    if code < 0:
        try:
            how = f"signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    return (f"DataLoader worker (pid {proc.pid}) exited unexpectedly ({how}); the batch it "
            "was loading is lost")


class DataLoader:
    """Loads data from a dataset and returns mini-batches of data.

    Parameters
    ----------
    dataset : Dataset
        Source dataset. Note that numpy and mxnet arrays can be directly used as a Dataset.
    batch_size : int
        Size of mini-batch.
    shuffle : bool
        Whether to shuffle the samples.
    sampler : Sampler
        The sampler to use. Either specify sampler or shuffle, not both.
    last_batch : {'keep', 'discard', 'rollover'}
        How to handle the last batch if batch_size does not evenly divide `len(dataset)`.
    batch_sampler : Sampler
        A sampler that returns mini-batches. Do not specify batch_size,
        shuffle, sampler, and last_batch if batch_sampler is specified.
    batchify_fn : callable
        Callback function to allow users to specify how to merge samples
        into a batch. Defaults to `default_batchify_fn`.
    num_workers : int, default 0
        The number of multiprocessing workers to use for data preprocessing.
    pin_memory : boolean, default False
        If ``True``, the dataloader will copy NDArrays into pinned memory before returning them.
    pin_device_id : int, default 0
        The device id to use for allocating pinned memory if pin_memory is ``True``.
    prefetch : int, default is `num_workers * 2`
        The number of prefetching batches only works if `num_workers` > 0.
    thread_pool : bool, default False
        If ``True``, use threading pool instead of multiprocessing pool.
    timeout : int, default is 120
        The timeout in seconds for each worker to fetch a batch data.
    auto_reload : bool, default is False
        control whether prefetch data after a batch is ended.
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        assert timeout > 0, "timeout must be positive, given {}".format(timeout)
        self._batch_sampler = _make_batch_sampler(dataset, batch_size, shuffle, sampler,
                                                  last_batch, batch_sampler)
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._worker_pool = None
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        if self._num_workers > 0:
            self._worker_pool = self._make_pool()
        if batchify_fn is None:
            self._batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        else:
            self._batchify_fn = batchify_fn
        self.auto_reload = auto_reload
        if self.auto_reload:
            self.refresh()
        else:
            self.clean()  # ensure self._iter exists.

    def _make_pool(self):
        """The worker pool: threads, or processes that ignore SIGINT."""
        active = (is_np_shape(), is_np_array())
        if self._thread_pool:
            return ThreadPool(self._num_workers, initializer=_thread_worker_initializer,
                              initargs=active)
        original_sigint_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            pool = multiprocessing.Pool(self._num_workers, initializer=_worker_initializer,
                                        initargs=[self._dataset, *active])
            # the first workers; any of them exiting means a lost batch (see _wait)
            self._worker_procs = list(getattr(pool, "_pool", ()))
            return pool
        finally:
            signal.signal(signal.SIGINT, original_sigint_handler)

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        t = self._iter
        self._iter = None  # ensure a single iter would not using twice.
        for item in t:
            yield item
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _same_process_iter(self):
        """Batches computed in this process."""
        for batch in self._batch_sampler:
            ret = self._batchify_fn([self._dataset[idx] for idx in batch])
            if self._pin_memory:
                ret = _as_in_context(ret, context.cpu_pinned(self._pin_device_id))
            yield ret

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        return _MultiWorkerIter(self._worker_pool, self._batchify_fn, self._batch_sampler,
                                pin_memory=self._pin_memory, pin_device_id=self._pin_device_id,
                                worker_fn=_thread_worker_fn if self._thread_pool else _worker_fn,
                                prefetch=self._prefetch,
                                dataset=self._dataset if self._thread_pool else None,
                                data_loader=self, timeout=self._timeout)

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, "_worker_pool", None)
        if pool:
            pool.terminate()

    def refresh(self):
        """Refresh its iter, fetch data again from its dataset"""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Remove its prefetched iter, the prefetch step will start after call its __iter__()"""
        self._iter = None


def _make_batch_sampler(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler):
    """Build the BatchSampler from DataLoader's arguments, with MXNet's checks."""
    if batch_sampler is None:
        if batch_size is None:
            raise ValueError("batch_size must be specified unless batch_sampler is specified")
        if sampler is None:
            if shuffle:
                sampler = _sampler.RandomSampler(len(dataset))
            else:
                sampler = _sampler.SequentialSampler(len(dataset))
        elif shuffle:
            raise ValueError("shuffle must not be specified if sampler is specified")
        return _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
    if batch_size is not None or shuffle or sampler is not None or last_batch is not None:
        raise ValueError("batch_size, shuffle, sampler and last_batch must "
                         "not be specified if batch_sampler is specified.")
    return batch_sampler

"""``mx.model.FeedForward``: MXNet 1.9.1's deprecated estimator-style model, trained
through the legacy executor manager (seed 002). ``mx.model`` re-exports it.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from . import io
from . import metric
from . import ndarray as nd
from . import optimizer as opt
from .optimizer import get_updater
from . import symbol as sym
from .base import mx_real_t
from .callback import LogValidationMetricsCallback
from .context import Context, cpu
from .executor_manager import DataParallelExecutorManager, _check_arguments, _load_data
from .initializer import Uniform
from .io import DataDesc
from .log import as_logger
from .model import (BatchEndParam, _create_kvstore, _initialize_kvstore, _multiple_callbacks,
                    _update_params, _update_params_on_kvstore,
                    _update_params_on_kvstore_nccl, load_checkpoint, save_checkpoint)

__all__ = ["FeedForward"]

BASE_ESTIMATOR = object


def _update_step(manager, kvstore, update_on_kvstore, updater, num_device):
    """Apply one optimizer step to the manager's parameters from its gradients."""
    if update_on_kvstore:
        if 'nccl' in kvstore.type:
            _update_params_on_kvstore_nccl(manager.param_arrays, manager.grad_arrays,
                                           kvstore, manager.param_names)
        else:
            _update_params_on_kvstore(manager.param_arrays, manager.grad_arrays,
                                      kvstore, manager.param_names)
    else:
        _update_params(manager.param_arrays, manager.grad_arrays, updater=updater,
                       num_device=num_device, kvstore=kvstore,
                       param_names=manager.param_names)


def _train_epoch(manager, epoch, epoch_size, train_data, eval_metric, monitor,
                 batch_end_callback, step, logger):
    """One epoch of ``_train_multi_device`` (``epoch_size`` batches, or one pass)."""
    nbatch = 0
    while True:
        do_reset = True
        for data_batch in train_data:
            manager.load_data_batch(data_batch)
            if monitor is not None:
                monitor.tic()
            manager.forward(is_train=True)
            manager.backward()
            step()
            if monitor is not None:
                monitor.toc_print()
            manager.update_metric(eval_metric, data_batch.label)
            nbatch += 1
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback, BatchEndParam(
                    epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=locals()))
            if epoch_size is not None and nbatch >= epoch_size:
                do_reset = False
                break
        if do_reset:
            logger.info('Epoch[%d] Resetting Data Iterator', epoch)
            train_data.reset()
        if epoch_size is None or nbatch >= epoch_size:
            break


def _eval_epoch(manager, epoch, eval_data, eval_metric, eval_batch_end_callback,
                eval_end_callback):
    """Evaluate on ``eval_data`` at the end of an epoch, calling the callbacks."""
    eval_metric.reset()
    eval_data.reset()
    total_num_batch = 0
    for i, eval_batch in enumerate(eval_data):
        manager.load_data_batch(eval_batch)
        manager.forward(is_train=False)
        manager.update_metric(eval_metric, eval_batch.label)
        if eval_batch_end_callback is not None:
            _multiple_callbacks(eval_batch_end_callback, BatchEndParam(
                epoch=epoch, nbatch=i, eval_metric=eval_metric, locals=locals()))
        total_num_batch += 1
    if eval_end_callback is not None:
        _multiple_callbacks(eval_end_callback, BatchEndParam(
            epoch=epoch, nbatch=total_num_batch, eval_metric=eval_metric, locals=locals()))
    eval_data.reset()


def _train_multi_device(symbol, ctx, arg_names, param_names, aux_names,
                        arg_params, aux_params,
                        begin_epoch, end_epoch, epoch_size, optimizer,
                        kvstore, update_on_kvstore,
                        train_data, eval_data=None, eval_metric=None,
                        epoch_end_callback=None, batch_end_callback=None,
                        logger=None, work_load_list=None, monitor=None,
                        eval_end_callback=None,
                        eval_batch_end_callback=None, sym_gen=None):
    """Internal training function on multiple devices (MXNet's ``model._train_multi_device``).

    The parameters are updated on the devices through a kvstore or a local updater;
    ``arg_params``/``aux_params`` are refreshed in place at the end of training and
    whenever an epoch-end callback needs them.
    """
    logger = as_logger(logger)
    manager = DataParallelExecutorManager(symbol=symbol, sym_gen=sym_gen, ctx=ctx,
                                          train_data=train_data, param_names=param_names,
                                          arg_names=arg_names, aux_names=aux_names,
                                          work_load_list=work_load_list, logger=logger)
    if monitor:
        manager.install_monitor(monitor)
    manager.set_params(arg_params, aux_params)
    updater = None
    if not update_on_kvstore:
        updater = get_updater(optimizer)
    else:
        kvstore.set_optimizer(optimizer)
    if kvstore:
        _initialize_kvstore(kvstore=kvstore, param_arrays=manager.param_arrays,
                            arg_params=arg_params, param_names=manager.param_names,
                            update_on_kvstore=update_on_kvstore)

    def step():
        _update_step(manager, kvstore, update_on_kvstore, updater, len(ctx))

    train_data.reset()
    for epoch in range(begin_epoch, end_epoch):
        tic = time.time()
        eval_metric.reset()
        _train_epoch(manager, epoch, epoch_size, train_data, eval_metric, monitor,
                     batch_end_callback, step, logger)
        toc = time.time()
        logger.info('Epoch[%d] Time cost=%.3f', epoch, (toc - tic))
        if epoch_end_callback or epoch + 1 == end_epoch:
            manager.copy_to(arg_params, aux_params)
        _multiple_callbacks(epoch_end_callback, epoch, symbol, arg_params, aux_params)
        if eval_data:
            _eval_epoch(manager, epoch, eval_data, eval_metric, eval_batch_end_callback,
                        eval_end_callback)


class FeedForward(BASE_ESTIMATOR):
    """Model class of MXNet for training and predicting feedforward nets.
    This class is designed for a single-data single output supervised network.

    Parameters
    ----------
    symbol : Symbol
        The symbol configuration of computation network.
    ctx : Context or list of Context, optional
        The device context of training and prediction.
    num_epoch : int, optional
        Training parameter, number of training epochs(epochs).
    epoch_size : int, optional
        Number of batches in a epoch. In default, it is set to
        ``ceil(num_train_examples / batch_size)``.
    optimizer : str or Optimizer, optional
        Training parameter, name or optimizer object for training.
    initializer : initializer function, optional
        Training parameter, the initialization scheme used.
    numpy_batch_size : int, optional
        The batch size of training data.
        Only needed when input array is numpy.
    arg_params : dict of str to NDArray, optional
        Model parameter, dict of name to NDArray of net's weights.
    aux_params : dict of str to NDArray, optional
        Model parameter, dict of name to NDArray of net's auxiliary states.
    allow_extra_params : boolean, optional
        Whether allow extra parameters that are not needed by symbol
        to be passed by aux_params and ``arg_params``.
    begin_epoch : int, optional
        The begining training epoch.
    kwargs : dict
        The additional keyword arguments passed to optimizer.
    """

    def __init__(self, symbol, ctx=None,
                 num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=Uniform(0.01),
                 numpy_batch_size=128,
                 arg_params=None, aux_params=None,
                 allow_extra_params=False,
                 begin_epoch=0,
                 **kwargs):
        warnings.warn(
            '\033[91mmxnet.model.FeedForward has been deprecated. '
            'Please use mxnet.mod.Module instead.\033[0m',
            DeprecationWarning, stacklevel=2)

        if isinstance(symbol, sym.Symbol):
            self.symbol = symbol
            self.sym_gen = None
        else:
            assert callable(symbol)
            self.symbol = None
            self.sym_gen = symbol

        # model parameters
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params

        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()

        # basic configuration
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        # training parameters
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        # internal helper state
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        """verify the argument of the default symbol and user provided parameters"""
        if self.argument_checked:
            return
        assert self.symbol is not None
        self.argument_checked = True

        # check if symbol contain duplicated names.
        _check_arguments(self.symbol)
        # rematch parameters to delete useless ones
        if self.allow_extra_params:
            if self.arg_params:
                arg_names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items()
                                   if k in arg_names}
            if self.aux_params:
                aux_names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items()
                                   if k in aux_names}

    @staticmethod
    def _is_data_arg(name):
        """Check if name is a data argument."""
        return name.endswith('data') or name.endswith('label')

    def _init_params(self, inputs, overwrite=False):
        """Initialize weight parameters and auxiliary states."""
        inputs = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in inputs]
        input_shapes = {item.name: item.shape for item in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        assert arg_shapes is not None
        input_dtypes = {item.name: item.dtype for item in inputs}
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(**input_dtypes)
        assert arg_dtypes is not None

        arg_names = self.symbol.list_arguments()
        input_names = input_shapes.keys()
        param_names = [key for key in arg_names if key not in input_names]
        aux_names = self.symbol.list_auxiliary_states()

        arg_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(arg_names, arg_shapes, arg_dtypes)
                      if k in param_names}
        aux_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(aux_names, aux_shapes, aux_dtypes)}

        for k, v in arg_params.items():
            if self.arg_params and k in self.arg_params and (not overwrite):
                arg_params[k][:] = self.arg_params[k][:]
            else:
                self.initializer(k, v)
        for k, v in aux_params.items():
            if self.aux_params and k in self.aux_params and (not overwrite):
                aux_params[k][:] = self.aux_params[k][:]
            else:
                self.initializer(k, v)

        self.arg_params = arg_params
        self.aux_params = aux_params
        return (arg_names, list(param_names), aux_names)

    def __getstate__(self):
        this = self.__dict__.copy()
        this['_pred_exec'] = None
        return this

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _init_predictor(self, input_shapes, type_dict=None):
        """Initialize the predictor module for running prediction."""
        shapes = {name: self.arg_params[name].shape for name in self.arg_params}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            assert arg_shapes is not None, "Incomplete input shapes"
            pred_shapes = [x.shape for x in self._pred_exec.arg_arrays]
            if [tuple(s) for s in arg_shapes] == pred_shapes:
                return
        # for now only use the first device
        pred_exec = self.symbol.simple_bind(
            self.ctx[0], grad_req='null', type_dict=type_dict, **shapes)
        pred_exec.copy_params_from(self.arg_params, self.aux_params)

        _check_arguments(self.symbol)
        self._pred_exec = pred_exec

    def _init_iter(self, X, y, is_train):
        """Initialize the iterator given input."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError('y must be specified when X is numpy.ndarray')
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError('y must be ndarray when X is numpy.ndarray')
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.flatten()
            if y.ndim != 1:
                raise ValueError("Label must be 1D or 2D (with 2nd dimension being 1)")
            if is_train:
                return io.NDArrayIter(X, y, min(X.shape[0], self.numpy_batch_size),
                                      shuffle=is_train, last_batch_handle='roll_over')
            return io.NDArrayIter(X, y, min(X.shape[0], self.numpy_batch_size), shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError('X must be DataIter, NDArray or numpy.ndarray')
        return X

    def _init_eval_iter(self, eval_data):
        """Initialize the iterator given eval_data."""
        if eval_data is None:
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is not None:
                if eval_data[1] is None and isinstance(eval_data[0], io.DataIter):
                    return eval_data[0]
                input_data = (np.array(eval_data[0]) if isinstance(eval_data[0], list)
                              else eval_data[0])
                input_label = (np.array(eval_data[1]) if isinstance(eval_data[1], list)
                               else eval_data[1])
                return self._init_iter(input_data, input_label, is_train=True)
            raise ValueError("Eval data is NONE")
        if not isinstance(eval_data, io.DataIter):
            raise TypeError('Eval data must be DataIter, or '
                            'NDArray/numpy.ndarray/list pair (i.e. tuple/list of length 2)')
        return eval_data

    def _prepare_predictor(self, X):
        """Bind the predictor for the iterator's data; returns the bound data arrays."""
        data_names = [x[0] for x in X.provide_data]
        type_dict = dict((key, value.dtype) for (key, value) in self.arg_params.items())
        for x in X.provide_data:
            if isinstance(x, io.DataDesc):
                type_dict[x.name] = x.dtype
            else:
                type_dict[x[0]] = mx_real_t
        self._init_predictor(X.provide_data, type_dict)
        return [self._pred_exec.arg_dict[name] for name in data_names]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Run the prediction, always only use one device.

        Parameters
        ----------
        X : mxnet.DataIter
        num_batch : int or None
            The number of batch to run. Go though all batches if ``None``.

        Returns
        -------
        y : numpy.ndarray or a list of numpy.ndarray if the network has multiple outputs.
            The predicted value of the output.
        """
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._prepare_predictor(X)
        batch_size = X.batch_size
        output_list = [[] for _ in self.symbol.list_outputs()]
        data_list = [[] for _ in X.provide_data]
        label_list = [[] for _ in X.provide_label]
        i = 0
        for batch in X:
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            real_size = batch_size - batch.pad
            for o_list, o_nd in zip(output_list, self._pred_exec.outputs):
                o_list.append(o_nd[0:real_size].asnumpy())
            if return_data:
                for j, x in enumerate(batch.data):
                    data_list[j].append(x[0:real_size].asnumpy())
                for j, x in enumerate(batch.label):
                    label_list[j].append(x[0:real_size].asnumpy())
            i += 1
            if num_batch is not None and i == num_batch:
                break
        outputs = [np.concatenate(x) for x in output_list]
        if len(outputs) == 1:
            outputs = outputs[0]
        if not return_data:
            return outputs
        data = [np.concatenate(x) for x in data_list]
        label = [np.concatenate(x) for x in label_list]
        return outputs, (data[0] if len(data) == 1 else data), \
            (label[0] if len(label) == 1 else label)

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None, reset=True):
        """Run the model given an input and calculate the score
        as assessed by an evaluation metric.

        Parameters
        ----------
        X : mxnet.DataIter
        eval_metric : metric.metric
            The metric for calculating score.
        num_batch : int or None
            The number of batches to run. Go though all batches if ``None``.

        Returns
        -------
        s : float
            The final score.
        """
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._prepare_predictor(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback, BatchEndParam(
                    epoch=0, nbatch=i, eval_metric=eval_metric, locals=locals()))
        return eval_metric.get()[1]

    def _make_optimizer(self, data, kvstore, update_on_kvstore, param_names):
        """Create the optimizer with its index -> name map (as ``FeedForward.fit`` does)."""
        param_idx2name = {}
        if update_on_kvstore:
            param_idx2name.update(enumerate(param_names))
        else:
            for i, n in enumerate(param_names):
                for k in range(len(self.ctx)):
                    param_idx2name[i * len(self.ctx) + k] = n
        self.kwargs["param_idx2name"] = param_idx2name
        if isinstance(self.optimizer, str):
            batch_size = data.batch_size
            if kvstore and 'dist' in kvstore.type and '_async' not in kvstore.type:
                batch_size *= kvstore.num_workers
            return opt.create(self.optimizer, rescale_grad=(1.0 / batch_size), **(self.kwargs))
        optimizer = self.optimizer
        if not optimizer.idx2name:
            optimizer.idx2name = param_idx2name.copy()
        return optimizer

    def fit(self, X, y=None, eval_data=None, eval_metric='acc',
            epoch_end_callback=None, batch_end_callback=None, kvstore='local', logger=None,
            work_load_list=None, monitor=None, eval_end_callback=LogValidationMetricsCallback(),
            eval_batch_end_callback=None):
        """Fit the model.

        Parameters
        ----------
        X : DataIter, or numpy.ndarray/NDArray
            Training data. If `X` is a `DataIter`, the name or (if name not available)
            the position of its outputs should match the corresponding variable
            names defined in the symbolic graph.
        y : numpy.ndarray/NDArray, optional
            Training set label. If X is ``numpy.ndarray`` or `NDArray`, `y` is required.
        eval_data : DataIter or numpy.ndarray/list/NDArray pair
            If eval_data is numpy.ndarray/list/NDArray pair, it should be ``(valid_data,
            valid_label)``.
        eval_metric : metric.EvalMetric or str or callable
            The evaluation metric.
        epoch_end_callback : callable(epoch, symbol, arg_params, aux_states)
            A callback that is invoked at end of each epoch.
        batch_end_callback: callable(epoch)
            A callback that is invoked at end of each batch.
        kvstore: KVStore or str, optional
            The KVStore or a string kvstore type: 'local', 'dist_sync', 'dist_async'.
        logger : logging logger, optional
            When not specified, default logger will be used.
        work_load_list : float or int, optional
            The list of work load for different devices, in the same order as `ctx`.
        monitor : Monitor, optional
            Installed on the executors.
        eval_end_callback, eval_batch_end_callback : callables, optional
            Called at the end of evaluation, and after each evaluation batch.
        """
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)

        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        self.kwargs["sym"] = self.symbol

        arg_names, param_names, aux_names = \
            self._init_params(data.provide_data + data.provide_label)

        # setup metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        # create kvstore
        (kvstore, update_on_kvstore) = _create_kvstore(kvstore, len(self.ctx), self.arg_params)
        optimizer = self._make_optimizer(data, kvstore, update_on_kvstore, param_names)

        # do training
        _train_multi_device(self.symbol, self.ctx, arg_names, param_names, aux_names,
                            self.arg_params, self.aux_params,
                            begin_epoch=self.begin_epoch, end_epoch=self.num_epoch,
                            epoch_size=self.epoch_size,
                            optimizer=optimizer,
                            train_data=data, eval_data=eval_data,
                            eval_metric=eval_metric,
                            epoch_end_callback=epoch_end_callback,
                            batch_end_callback=batch_end_callback,
                            kvstore=kvstore, update_on_kvstore=update_on_kvstore,
                            logger=logger, work_load_list=work_load_list, monitor=monitor,
                            eval_end_callback=eval_end_callback,
                            eval_batch_end_callback=eval_batch_end_callback,
                            sym_gen=self.sym_gen)

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Checkpoint the model checkpoint into file.

        Parameters
        ----------
        prefix : str
            Prefix of model name.
        epoch : int
            The epoch number of the model (defaults to ``num_epoch``).
        remove_amp_cast : bool, optional
            Whether to remove the amp_cast and amp_multicast operators, before saving.
        """
        if epoch is None:
            epoch = self.num_epoch
        assert epoch is not None
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params,
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """Load model checkpoint from file.

        Parameters
        ----------
        prefix : str
            Prefix of model name.
        epoch : int
            epoch number of model we would like to load.
        ctx : Context or list of Context, optional
            The device context of training and prediction.
        kwargs : dict
            Other parameters for model, including `num_epoch`, optimizer and `numpy_batch_size`.

        Returns
        -------
        model : FeedForward
            The loaded model that can be used for prediction.
        """
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx,
                           arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch,
                           **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None,
               num_epoch=None, epoch_size=None, optimizer='sgd', initializer=Uniform(0.01),
               eval_data=None, eval_metric='acc',
               epoch_end_callback=None, batch_end_callback=None,
               kvstore='local', logger=None, work_load_list=None,
               eval_end_callback=LogValidationMetricsCallback(),
               eval_batch_end_callback=None, **kwargs):
        """Functional style to create a model.
        This function is more consistent with functional
        languages such as R, where mutation is not allowed.

        Parameters
        ----------
        symbol : Symbol
            The symbol configuration of a computation network.
        X : DataIter
            Training data.
        y : numpy.ndarray, optional
            If `X` is a ``numpy.ndarray``, `y` must be set.
        ctx : Context or list of Context, optional
            The device context of training and prediction.
        num_epoch : int, optional
            The number of training epochs(epochs).
        epoch_size : int, optional
            Number of batches in a epoch.
        optimizer : str or Optimizer, optional
            The name of the chosen optimizer, or an optimizer object, used for training.
        initializer : initializer function, optional
            The initialization scheme used.
        eval_data, eval_metric, epoch_end_callback, batch_end_callback, kvstore, logger,
        work_load_list, eval_end_callback, eval_batch_end_callback :
            As in `fit`.
        """
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch,
                            epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback,
                  kvstore=kvstore,
                  logger=logger,
                  work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model

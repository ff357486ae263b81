"""Visualization callbacks for training in a notebook (``mx.notebook.callback``).

:class:`PandasLogger` records training statistics into pandas DataFrames;
:class:`LiveLearningCurve` and :class:`LiveTimeSeries` draw bokeh charts that update as
training runs. Their ``callback_args()`` give the keyword arguments of ``Module.fit`` /
``FeedForward.fit`` that install them, and :func:`args_wrapper` merges several::

    logger = mx.notebook.callback.PandasLogger(batch_size=32)
    module.fit(train_iter, eval_data=val_iter, **logger.callback_args())
    logger.train_df   # one row every `frequent` batches

pandas and bokeh are optional: creating a logger without pandas, or a chart without
bokeh, raises ``ImportError`` naming the package.
"""
from __future__ import annotations

import abc
import datetime
import time
from collections import defaultdict

__all__ = ["PandasLogger", "LiveBokehChart", "LiveTimeSeries", "LiveLearningCurve",
           "args_wrapper"]


def _import_pandas():
    """The pandas module, or ImportError naming it."""
    try:
        import pandas
    except ImportError as err:
        raise ImportError("mx.notebook.callback needs the 'pandas' package to log training "
                          "statistics: pip install pandas") from err
    return pandas


def _import_bokeh():
    """The bokeh module (with bokeh.io and bokeh.plotting), or ImportError naming it."""
    try:
        import bokeh.io
        import bokeh.models
        import bokeh.plotting
    except ImportError as err:
        raise ImportError("mx.notebook.callback needs the 'bokeh' package to draw live "
                          "charts: pip install bokeh") from err
    return bokeh


def _batch_metrics(param) -> dict:
    """The name -> value of ``param.eval_metric`` (reset afterwards), or {} without one."""
    if param.eval_metric is None:
        return {}
    metrics = dict(param.eval_metric.get_name_value())
    param.eval_metric.reset()
    return metrics


class PandasLogger:
    """Logs statistics about a training run into three pandas DataFrames: ``train``
    (every ``frequent`` batches), ``eval`` (once per evaluation) and ``epoch``.

    Parameters
    ----------
    batch_size : int
        Batch size of the data.
    frequent : int, default 50
        How many training mini-batches between two rows of the train DataFrame.

    Raises
    ------
    ImportError
        When pandas is not installed.
    """

    def __init__(self, batch_size, frequent=50):
        pd = _import_pandas()
        self.batch_size = batch_size
        self.frequent = frequent
        self._dataframes = {"train": pd.DataFrame(), "eval": pd.DataFrame(),
                            "epoch": pd.DataFrame()}
        self.last_time = time.time()
        self.start_time = datetime.datetime.now()
        self.last_epoch_time = datetime.datetime.now()

    @property
    def train_df(self):
        """The DataFrame of training metrics, a row every ``frequent`` batches."""
        return self._dataframes["train"]

    @property
    def eval_df(self):
        """The DataFrame of validation metrics, a row per evaluation."""
        return self._dataframes["eval"]

    @property
    def epoch_df(self):
        """The DataFrame of epoch timings, a row per epoch."""
        return self._dataframes["epoch"]

    @property
    def all_dataframes(self):
        """The dict of DataFrames: 'train', 'eval' and 'epoch'."""
        return self._dataframes

    def elapsed(self):
        """The time since the logger was created (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def append_metrics(self, metrics, df_name):
        """Append a row of metrics to a DataFrame, adding columns for new metric names.

        Parameters
        ----------
        metrics : dict of str to value
            The row.
        df_name : str
            'train', 'eval' or 'epoch'.
        """
        dataframe = self._dataframes[df_name]
        for name in metrics:
            if name not in dataframe.columns:
                dataframe[name] = None
        dataframe.loc[len(dataframe)] = [metrics.get(c) for c in dataframe.columns]

    def train_cb(self, param):
        """``batch_end_callback``: log a training row every ``frequent`` batches."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, "train")

    def eval_cb(self, param):
        """``eval_end_callback``: log the validation metrics."""
        self._process_batch(param, "eval")

    def _process_batch(self, param, df_name):
        """Append the metrics, speed and position of a batch to DataFrame ``df_name``."""
        now = time.time()
        metrics = _batch_metrics(param)
        try:
            speed = self.frequent / (now - self.last_time)
        except ZeroDivisionError:
            speed = float("inf")
        # MXNet: the two speed columns are named the other way round
        metrics["batches_per_sec"] = speed * self.batch_size
        metrics["records_per_sec"] = speed
        metrics["elapsed"] = self.elapsed()
        metrics["minibatch_count"] = param.nbatch
        metrics["epoch"] = param.epoch
        self.append_metrics(metrics, df_name)
        self.last_time = now

    def epoch_cb(self, *args):
        """``epoch_end_callback``: log the elapsed and the epoch's time.

        It takes (and ignores) the arguments ``fit`` passes to an epoch-end callback
        (epoch, symbol, arg_params, aux_params); MXNet's takes none and so fails there.
        """
        now = datetime.datetime.now()
        self.append_metrics({"elapsed": self.elapsed(),
                             "epoch_time": now - self.last_epoch_time}, "epoch")
        self.last_epoch_time = now

    def callback_args(self):
        """The keyword arguments of ``fit`` that install every callback of this logger:
        ``model.fit(X=train, eval_data=test, **logger.callback_args())``."""
        return {"batch_end_callback": self.train_cb,
                "eval_end_callback": self.eval_cb,
                "epoch_end_callback": self.epoch_cb}


class LiveBokehChart(abc.ABC):
    """A bokeh chart in a Jupyter notebook that updates as training proceeds; subclasses
    define the chart (``setup_chart``) and its data (``update_chart_data``).

    Parameters
    ----------
    pandas_logger : PandasLogger or None
        The logger collecting the data; None creates one (``batch_size``, ``frequent``).
    metric_name : str or None
        The metric drawn.
    display_freq : float, default 10
        The least number of seconds between two redraws on batch ends.
    batch_size : int, optional
    frequent : int, default 50

    Raises
    ------
    ImportError
        When bokeh (or, to create a logger, pandas) is not installed.
    """

    def __init__(self, pandas_logger, metric_name, display_freq=10, batch_size=None,
                 frequent=50):
        self._bokeh = _import_bokeh()
        if pandas_logger:
            self.pandas_logger = pandas_logger
        else:
            self.pandas_logger = PandasLogger(batch_size=batch_size, frequent=frequent)
        self.display_freq = display_freq
        self.last_update = time.time()
        self.metric_name = metric_name
        self._bokeh.io.output_notebook()
        self.handle = self.setup_chart()

    @abc.abstractmethod
    def setup_chart(self):
        """Render the bokeh figure and return its notebook handle."""

    @abc.abstractmethod
    def update_chart_data(self):
        """Bring the figure's data up to date."""

    def interval_elapsed(self):
        """True when more than ``display_freq`` seconds passed since the last redraw."""
        return time.time() - self.last_update > self.display_freq

    def _push_render(self):
        """Push the figure's new state to the notebook."""
        self._bokeh.io.push_notebook(handle=self.handle)
        self.last_update = time.time()

    def _do_update(self):
        """Update the chart's data and redraw it."""
        self.update_chart_data()
        self._push_render()

    def batch_cb(self, param):
        """``batch_end_callback``: redraw when ``display_freq`` seconds have passed."""
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        """``eval_end_callback``: redraw now."""
        self._do_update()

    def callback_args(self):
        """The keyword arguments of ``fit`` that install this chart's callbacks."""
        return {"batch_end_callback": self.batch_cb,
                "eval_end_callback": self.eval_cb}


class LiveTimeSeries(LiveBokehChart):
    """A line of values against the time elapsed since the chart was created; add a
    point with ``update_chart_data(value)``.

    Parameters
    ----------
    **fig_params
        Keyword arguments of ``bokeh.plotting.figure``.
    """

    def __init__(self, **fig_params):
        bokeh = _import_bokeh()
        self.fig = bokeh.plotting.figure(x_axis_type="datetime",
                                         x_axis_label="Elapsed time", **fig_params)
        super().__init__(None, None)

    def setup_chart(self):
        self.start_time = datetime.datetime.now()
        self.x_axis_val = []
        self.y_axis_val = []
        self.source = self._bokeh.models.ColumnDataSource(data={"x": [], "y": []})
        self.fig.line("x", "y", source=self.source)
        return self._bokeh.plotting.show(self.fig, notebook_handle=True)

    def elapsed(self):
        """The time since the chart was set up (a ``datetime.timedelta``)."""
        return datetime.datetime.now() - self.start_time

    def update_chart_data(self, value=None):
        """Add the point (elapsed time, ``value``) and redraw; without a value (the
        callbacks' periodic redraw) only redraw."""
        if value is not None:
            self.x_axis_val.append(self.elapsed())
            self.y_axis_val.append(value)
            self.source.data = {"x": list(self.x_axis_val), "y": list(self.y_axis_val)}
        self._push_render()


class LiveLearningCurve(LiveBokehChart):
    """A learning curve: a training and a validation metric over training time.

    Parameters
    ----------
    metric_name : str
        The metric drawn (a name ``eval_metric.get_name_value()`` gives).
    display_freq : float, default 10
        The least number of seconds between two redraws on batch ends.
    frequent : int, default 50
        How many batches between two training points.
    """

    def __init__(self, metric_name, display_freq=10, frequent=50):
        self.frequent = frequent
        self.start_time = datetime.datetime.now()
        self._data = {"train": {"elapsed": []}, "eval": {"elapsed": []}}
        super().__init__(None, metric_name, display_freq, frequent=frequent)

    def setup_chart(self):
        models, plotting = self._bokeh.models, self._bokeh.plotting
        self.fig = plotting.figure(x_axis_type="datetime", x_axis_label="Training time")
        self.train_source = models.ColumnDataSource(data={"x": [], "y": []})
        self.valid_source = models.ColumnDataSource(data={"x": [], "y": []})
        self.train1 = self.fig.line("x", "y", source=self.train_source, line_dash="dotted",
                                    alpha=0.3, legend_label="train")
        self.train2 = self.fig.scatter("x", "y", source=self.train_source, size=1.5,
                                       line_alpha=0.3, fill_alpha=0.3, legend_label="train")
        self.train2.visible = False  # shown instead of the line once there are many points
        self.valid1 = self.fig.line("x", "y", source=self.valid_source, line_color="green",
                                    line_width=2, legend_label="validation")
        self.valid2 = self.fig.scatter("x", "y", source=self.valid_source,
                                       line_color="green", line_width=2)
        self.fig.legend.location = "bottom_right"
        self.fig.yaxis.axis_label = self.metric_name
        return plotting.show(self.fig, notebook_handle=True)

    def batch_cb(self, param):
        """``batch_end_callback``: record every ``frequent`` batches, redraw when due."""
        if param.nbatch % self.frequent == 0:
            self._process_batch(param, "train")
        if self.interval_elapsed():
            self._do_update()

    def eval_cb(self, param):
        """``eval_end_callback``: record the validation metrics and redraw now."""
        self._process_batch(param, "eval")
        self._do_update()

    def _process_batch(self, param, df_name):
        """Record the metrics of ``param`` and the elapsed time under ``df_name``."""
        metrics = _batch_metrics(param)
        metrics["elapsed"] = datetime.datetime.now() - self.start_time
        for key, value in metrics.items():
            self._data[df_name].setdefault(key, []).append(value)

    def update_chart_data(self):
        """Copy the recorded points of ``metric_name`` into the chart."""
        for df_name, source in (("train", self.train_source), ("eval", self.valid_source)):
            data = self._data[df_name]
            if data["elapsed"]:
                source.data = {"x": list(data["elapsed"]),
                               "y": list(data.get(self.metric_name, []))}
        if len(self._data["train"]["elapsed"]) > 10:
            self.train1.visible = False
            self.train2.visible = True


def args_wrapper(*args):
    """Merge the ``callback_args()`` of several callback objects (``PandasLogger``,
    ``LiveLearningCurve``, ...) into one dict of ``fit`` keyword arguments, each a list.

    Returns
    -------
    dict of str to list
    """
    out = defaultdict(list)
    for callback in args:
        for key, value in callback.callback_args().items():
            out[key].append(value)
    return dict(out)

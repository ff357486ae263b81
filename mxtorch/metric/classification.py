"""Classification metrics: accuracy, top-k, F1, MCC, PCC, perplexity."""
from __future__ import annotations

import math

import numpy

from .. import ndarray
from .base import EvalMetric, alias, check_label_shapes, register


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Compute accuracy classification score.

    Parameters
    ----------
    axis : int, default=1
        The axis that represents classes.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            if pred_label.shape == label.shape:
                pred_np = pred_label.asnumpy()
            elif pred_label.context.device_type == "cpu":
                pred_np = pred_label.asnumpy().argmax(axis=self.axis)
            else:   # reduce on the device, copy only the class indices
                pred_np = ndarray.argmax(pred_label, axis=self.axis).asnumpy()
            pred_np = pred_np.astype("int32", copy=False).ravel()
            label_np = label.asnumpy().astype("int32", copy=False).ravel()
            check_label_shapes(label_np, pred_np)
            num_correct = int(numpy.count_nonzero(pred_np == label_np))
            self._add(num_correct, len(pred_np))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Compute top k predictions accuracy.

    Parameters
    ----------
    top_k : int
        Whether targets are in top k predictions (must be > 1).
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        assert self.top_k > 1, "Please use Accuracy if top_k is no more than 1"
        self.name += "_%d" % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            assert len(pred_label.shape) <= 2, "Predictions should be no more than 2 dims"
            pred_np = pred_label.asnumpy().astype("float32")
            label_np = label.asnumpy().astype("int32").ravel()
            check_label_shapes(label_np, pred_np)
            num_samples = pred_np.shape[0]
            if pred_np.ndim == 1:
                # MXNet: a 1-D prediction is compared against argpartition indices, so
                # only its sample count matters for num_inst.
                part = numpy.argpartition(pred_np, -self.top_k)
                self.sum_metric += (part.ravel() == label_np).sum()
            else:
                num_classes = pred_np.shape[1]
                top_k = min(num_classes, self.top_k)
                topk_idx = numpy.argpartition(pred_np, -top_k, axis=1)[:, num_classes - top_k:]
                num_correct = int((topk_idx == label_np[:, None]).sum())
                self.sum_metric += num_correct
                self.global_sum_metric += num_correct
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics:
    """Running confusion-matrix counts (local and global) for binary classification."""

    _FIELDS = ("true_positives", "false_negatives", "false_positives", "true_negatives")

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        """Update the counts from one batch of labels and 2-column predictions."""
        pred = pred.asnumpy()
        label = label.asnumpy().astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification."
                             % self.__class__.__name__)
        pred_true = pred_label == 1
        pred_false = ~pred_true
        label_true = label == 1
        label_false = ~label_true
        counts = ((pred_true & label_true).sum(), (pred_false & label_true).sum(),
                  (pred_true & label_false).sum(), (pred_false & label_false).sum())
        for field, count in zip(self._FIELDS, counts):
            setattr(self, field, getattr(self, field) + int(count))
            setattr(self, "global_" + field, getattr(self, "global_" + field) + int(count))

    @staticmethod
    def _ratio(num, other):
        """num / (num + other), 0 when empty."""
        return float(num) / (num + other) if num + other > 0 else 0.0

    @staticmethod
    def _f(precision, recall):
        """Harmonic mean, 0 when both are 0."""
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    @property
    def precision(self):
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self):
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self):
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self):
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self):
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self):
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global=False):
        """Matthews correlation coefficient of the local (or global) counts."""
        pre = "global_" if use_global else ""
        if not (self.global_total_examples if use_global else self.total_examples):
            return 0.0
        tp, fn, fp, tn = (float(getattr(self, pre + f)) for f in self._FIELDS)
        denom = 1.0
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            if term != 0.0:
                denom *= term
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self):
        return sum(getattr(self, f) for f in self._FIELDS)

    @property
    def global_total_examples(self):
        return sum(getattr(self, "global_" + f) for f in self._FIELDS)

    def local_reset_stats(self):
        """Zero the local counts."""
        for field in self._FIELDS:
            setattr(self, field, 0)

    def reset_stats(self):
        """Zero local and global counts."""
        for field in self._FIELDS:
            setattr(self, field, 0)
            setattr(self, "global_" + field, 0)


class _BinaryMetric(EvalMetric):
    """Shared update/reset of F1 and MCC (macro: mean over batches; micro: pooled counts)."""

    def __init__(self, name, output_names, label_names, average):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True)

    def _score(self, use_global):
        """The metric of the current counts."""
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            self.metrics.reset_stats()
        else:
            self.sum_metric = self._score(False) * self.metrics.total_examples
            self.global_sum_metric = self._score(True) * self.metrics.global_total_examples
            self.num_inst = self.metrics.total_examples
            self.global_num_inst = self.metrics.global_total_examples

    def reset(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.0
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """Compute the F1 score of a binary classification problem.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    average : str, default 'macro'
        'macro' averages the per-batch F1; 'micro' computes F1 over all pooled counts.
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryMetric):
    """Compute the Matthews Correlation Coefficient of a binary classification problem.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    average : str, default 'macro'
        'macro' averages the per-batch MCC; 'micro' computes MCC over all pooled counts.
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)
        self._average = average
        self._metrics = self.metrics

    def _score(self, use_global):
        return self.metrics.matthewscc(use_global=use_global)


@register
class Perplexity(EvalMetric):
    """Compute perplexity: ``exp(-sum(log p(label)) / n)``.

    Parameters
    ----------
    ignore_label : int or None
        Index of invalid label to ignore when counting.
    axis : int (default -1)
        The axis from prediction that was used to compute softmax.
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        assert len(labels) == len(preds)
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            assert label.size == pred.size / pred.shape[-1], \
                "shape mismatch: %s vs. %s" % (label.shape, pred.shape)
            label_np = label.asnumpy().reshape(-1).astype(numpy.int64)
            pred_np = numpy.moveaxis(pred.asnumpy(), self.axis, -1)
            pred_np = pred_np.reshape(-1, pred_np.shape[-1])
            # MXNet: pick() clips out-of-range labels.
            label_np_c = numpy.clip(label_np, 0, pred_np.shape[-1] - 1)
            picked = pred_np[numpy.arange(label_np.size), label_np_c]
            if self.ignore_label is not None:
                ignore = (label_np == self.ignore_label).astype(picked.dtype)
                num -= int(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(picked, 1e-10)).sum(dtype=numpy.float32))
            num += picked.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self):
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)


@register
class PCC(EvalMetric):
    """Multiclass Pearson correlation coefficient (the multiclass MCC) from a confusion matrix.

    Parameters
    ----------
    name : str
        Name of this metric instance for display.
    """

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        """Enlarge the confusion matrices by ``inc`` classes."""
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.k += inc

    def _calc_mcc(self, cmat):
        """MCC of a confusion matrix (nan when degenerate)."""
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = label.asnumpy().astype("int32", copy=False)
            pred = pred.asnumpy()
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype("int32", copy=False)
            n = int(max(pred.max(), label.max()))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred.ravel(), label.ravel()), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, _value):
        """Ignored: PCC derives sum_metric from its confusion matrix."""

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, _value):
        """Ignored: PCC derives global_sum_metric from its confusion matrix."""

    def reset(self):
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))

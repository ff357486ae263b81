"""Online evaluation metrics (``mx.metric``), as in MXNet 1.9.1."""
# MXNet: mxnet.metric has ndarray and registry in its namespace (GluonTS imports
# ``from mxnet.metric import ndarray``)
from .. import ndarray, registry
from .base import (check_label_shapes, EvalMetric, register, alias, create,
                   CompositeEvalMetric, CustomMetric, np)
from .classification import Accuracy, TopKAccuracy, F1, MCC, Perplexity, PCC
from .regression import (MAE, MSE, RMSE, CrossEntropy, NegativeLogLikelihood,
                         PearsonCorrelation, Loss, Torch, Caffe)

__all__ = ["check_label_shapes", "EvalMetric", "register", "alias", "create",
           "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "Perplexity", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "PCC",
           "Loss", "Torch", "Caffe", "CustomMetric", "np"]

"""Loss-output operators with MXNet's gradients: SoftmaxOutput, *RegressionOutput, MakeLoss, CTCLoss, ..."""
from __future__ import annotations

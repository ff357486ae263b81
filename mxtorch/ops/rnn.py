"""The fused RNN operator (rnn_relu, rnn_tanh, lstm, gru) with MXNet's packed parameter layout."""
from __future__ import annotations

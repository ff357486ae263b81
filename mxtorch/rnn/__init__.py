"""Legacy symbolic RNN API (``mx.rnn``): cells, bucketing sentence iterator, checkpoints."""
from . import rnn_cell
from .rnn_cell import *  # noqa: F403
from . import conv_cell
from . import rnn
from .rnn import *  # noqa: F403
from . import io
from .io import *  # noqa: F403

"""Legacy symbolic RNN API (``mx.rnn``): cells, bucketing sentence iterator, checkpoints."""
from . import rnn_cell
from .rnn_cell import *
from . import conv_cell
from . import rnn
from .rnn import *
from . import io
from .io import *

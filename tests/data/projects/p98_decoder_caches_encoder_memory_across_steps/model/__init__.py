from .encoder import Encoder
from .decoder import Decoder
from .seq2seq import Seq2Seq

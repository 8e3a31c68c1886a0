import torch.nn as nn

from .decoder import Decoder
from .encoder import Encoder


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.encoder = Encoder(vocab, dim)
        self.decoder = Decoder(vocab, dim)

    def forward(self, src, tgt):
        return self.decoder(tgt, self.encoder(src))

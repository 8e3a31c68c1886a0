import torch.nn as nn

from . import register


@register("gru")
class CharGRU(nn.Module):
    def __init__(self, vocab=16, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h

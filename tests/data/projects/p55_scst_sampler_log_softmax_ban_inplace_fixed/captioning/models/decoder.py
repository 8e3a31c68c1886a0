import torch.nn as nn


class GRUDecoder(nn.Module):
    def __init__(self, vocab_size=10, feat_dim=6, hidden=16):
        super().__init__()
        self.init_h = nn.Linear(feat_dim, hidden)
        self.embed = nn.Embedding(vocab_size, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab_size)

    def init_state(self, feats):
        return self.init_h(feats).tanh()

    def step(self, tokens, h):
        h = self.cell(self.embed(tokens), h)
        return self.out(h), h

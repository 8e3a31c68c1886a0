import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(2 * dim, vocab)
        self.cache = None

    def forward(self, tgt, memory):
        self.cache = memory
        ctx = self.cache.mean(1, keepdim=True).expand(-1, tgt.size(1), -1)
        return self.out(torch.cat([self.embed(tgt), ctx], -1))

import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=12, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def step(self, token, hidden):
        hidden = self.cell(self.embed(token), hidden)
        return self.lm_head(hidden), hidden

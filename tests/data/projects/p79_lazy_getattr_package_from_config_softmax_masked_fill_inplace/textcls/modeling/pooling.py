import torch.nn as nn


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h, pad_mask):
        weights = self.score(h).squeeze(-1).softmax(dim=-1)
        weights.masked_fill_(pad_mask, 0.0)
        return (weights.unsqueeze(-1) * h).sum(1)

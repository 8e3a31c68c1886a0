import torch.nn as nn

from .pooling import AttentionPool


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, dim, num_classes, pad_id):
        super().__init__()
        self.pad_id = pad_id
        self.emb = nn.Embedding(vocab_size, dim)
        self.pool = AttentionPool(dim)
        self.out = nn.Linear(dim, num_classes)

    @classmethod
    def from_config(cls, config):
        return cls(config.vocab_size, config.dim, config.num_classes, config.pad_id)

    def forward(self, ids):
        h = self.emb(ids)
        return self.out(self.pool(h, ids == self.pad_id))

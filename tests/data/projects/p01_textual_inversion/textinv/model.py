import torch.nn as nn


class TinyTextEncoder(nn.Module):
    """A stand-in for CLIPTextModel: token embeddings, a projection, mean pooling."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def get_input_embeddings(self):
        return self.token_embedding

    def set_input_embeddings(self, emb):
        self.token_embedding = emb

    def forward(self, input_ids):
        return self.proj(self.token_embedding(input_ids)).mean(dim=1)

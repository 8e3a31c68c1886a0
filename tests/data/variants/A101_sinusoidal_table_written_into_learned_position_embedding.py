# source: learned position embeddings initialised from the sinusoidal table of 'Attention Is All You Need' (the common forum error 'a view of a leaf Variable that requires grad is being used in an in-place operation' when writing into nn.Embedding.weight): the table is written into slices of the embedding's weight in __init__ without torch.no_grad()
# family: A
# expect: error
# line: 18, 19
# fix: write the table under torch.no_grad() (with torch.no_grad(): self.weight[:, 0::2] = ...; self.weight[:, 1::2] = ...)
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class SinusoidInitPositionEmbedding(nn.Embedding):
    def __init__(self, max_len, dim):
        super().__init__(max_len, dim)
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        inv_freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
        self.weight[:, 0::2] = torch.sin(position * inv_freq)
        self.weight[:, 1::2] = torch.cos(position * inv_freq)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1]).unsqueeze(0).expand_as(tokens)
        return super().forward(positions)


if __name__ == "__main__":
    tok = nn.Embedding(50, 16)
    pos = SinusoidInitPositionEmbedding(32, 16)
    head = nn.Linear(16, 2)
    tokens, labels = torch.randint(0, 50, (4, 10)), torch.randint(0, 2, (4,))
    h = tok(tokens) + pos(tokens)
    loss = nn.functional.cross_entropy(head(h.mean(dim=1)), labels)
    loss.backward()
    print("loss %.4f" % loss.item())

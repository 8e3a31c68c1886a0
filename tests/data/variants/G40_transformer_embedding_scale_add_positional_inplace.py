# source: "Annotated Transformer"-style embeddings: x = embedding(tokens) * sqrt(d_model); x += pe[:, :T] (in-place positional encoding)
# family: G
# expect: ok
# line: 29  (backward: 38)
# fix: none needed - the embedding saves only the indices and the multiplication by a Python scalar saves nothing, so adding the positional table in place is safe
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class PositionalEmbedding(nn.Module):
    def __init__(self, vocab=40, d_model=16, max_len=32, dropout=0.1):
        super().__init__()
        self.lut = nn.Embedding(vocab, d_model)
        self.d_model = d_model
        self.dropout = nn.Dropout(dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, tokens):
        x = self.lut(tokens) * math.sqrt(self.d_model)
        x += self.pe[:, : tokens.size(1)]
        return self.dropout(x)


if __name__ == "__main__":
    emb = PositionalEmbedding().train()
    enc = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    out = enc(emb(torch.randint(0, 40, (2, 7))))
    loss = out.pow(2).mean()
    loss.backward()
    print("loss", loss.item())

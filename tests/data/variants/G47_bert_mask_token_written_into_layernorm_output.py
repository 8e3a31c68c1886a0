# source: BERT/data2vec-style masked modelling that writes a learned [MASK] embedding into the normalised token embeddings (x[mask] = self.mask_token)
# family: G
# expect: ok
# line: 24  (backward: 35)
# fix: none needed - LayerNorm's backward saves its input, weight, mean and rstd but not its output, so the index_put_ on the LayerNorm output is safe (and the mask token receives its gradient through it)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedEncoder(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.ln = nn.LayerNorm(d)
        self.mask_token = nn.Parameter(torch.zeros(d))
        self.encoder = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, mask):
        x = self.ln(self.tok(ids))
        x[mask] = self.mask_token.to(x.dtype)
        return self.head(self.encoder(x))


if __name__ == "__main__":
    model = MaskedEncoder()
    ids = torch.randint(0, 30, (2, 6))
    mask = torch.rand(2, 6) < 0.3
    mask[0, 0] = True
    logits = model(ids, mask)
    loss = F.cross_entropy(logits[mask], ids[mask])
    loss.backward()
    print("loss", loss.item(), "mask_token grad", model.mask_token.grad.norm().item())

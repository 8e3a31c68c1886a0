# source: https://github.com/guocheng2025/Transformer-Encoder/issues/1 ("positional embeddings not linked to the encoder ?": the positional embeddings are defined but never used with the inputs; "I found the same issue"); the parameter sits in the optimizer and no loss ever reaches it
# family: H
# expect: ok
# verify: the position embedding's gradient is compared with autograd's gradient of the encoder that adds it to the token embeddings
# line: 24  (backward: 38)
# fix: (fixed version of H53_learned_position_embedding_never_added.py) add the position embedding to the token embeddings before the encoder: h = self.tok(tokens) + self.pos[:, :tokens.size(1)]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, dim=16, max_len=12, n_classes=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = nn.Linear(dim, n_classes)

    def embed(self, tokens):
        h = self.tok(tokens) + self.pos[:, :tokens.size(1)]
        return h

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


if __name__ == "__main__":
    model = TextClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        tokens, labels = torch.randint(0, 50, (4, 10)), torch.randint(0, 3, (4,))
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    tokens, labels = torch.randint(0, 50, (4, 10)), torch.randint(0, 3, (4,))
    model.zero_grad()
    F.cross_entropy(model(tokens), labels).backward()
    got = model.pos.grad
    h = model.tok(tokens) + model.pos[:, :tokens.size(1)]
    ref_loss = F.cross_entropy(model.head(model.encoder(h).mean(dim=1)), labels)
    (ref,) = torch.autograd.grad(ref_loss, model.pos)
    if got is not None and torch.allclose(got, ref, atol=1e-6):
        print("MATCH")
    else:
        print("MISMATCH: the position embedding is in the optimizer but gets", "no gradient" if got is None else "a wrong one")

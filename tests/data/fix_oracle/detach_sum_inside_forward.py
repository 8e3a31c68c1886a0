# fix-kind: detach
# why: `x += self.emb(t)` and `loss += term` inside one forward are sums the backward must go
#      through; a `.detach()` there would stop training silently.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.embs = nn.ModuleList([nn.Embedding(5, 4) for _ in range(3)])

    def forward(self, x, t):
        x = self.lin(x)
        for i, emb in enumerate(self.embs):
            x += emb(t[:, i])
        return x


enc = Encoder()
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
for step in range(3):
    x, t = torch.randn(6, 4), torch.randint(0, 5, (6, 3))
    out = enc(x, t)
    loss = 0
    for k in range(2):
        loss += out[:, k].pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{step} {loss.item():.6f}")

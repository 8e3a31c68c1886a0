# source: knowledge-graph embedding models (TransE) that renormalise the entity embedding table in place under torch.no_grad() right after the lookup, before the backward
# family: G
# expect: ok
# line: 25  (backward: 36)
# fix: none needed - the embedding backward saves only the indices (never the weight), and the gathered rows are fresh tensors, so rewriting the table before backward changes nothing backward needs
import torch
import torch.nn as nn

torch.manual_seed(0)


class TransE(nn.Module):
    def __init__(self, n_ent=20, n_rel=4, d=8, margin=1.0):
        super().__init__()
        self.ent = nn.Embedding(n_ent, d)
        self.rel = nn.Embedding(n_rel, d)
        self.margin = margin

    def score(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(p=1, dim=-1)

    def forward(self, pos, neg):
        pos_score, neg_score = self.score(*pos), self.score(*neg)
        with torch.no_grad():
            self.ent.weight.div_(self.ent.weight.norm(dim=1, keepdim=True))
        return torch.relu(self.margin + pos_score - neg_score).mean()


if __name__ == "__main__":
    model = TransE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        h, r, t = torch.randint(0, 20, (6,)), torch.randint(0, 4, (6,)), torch.randint(0, 20, (6,))
        loss = model((h, r, t), (h, r, torch.randint(0, 20, (6,))))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())

# source: learned bucketing / adaptive-computation code that turns a predicted score into an embedding index with .long() (forum threads "scorer gets no gradient", "grad is None after casting to long"): the integer cast has no derivative, so the scorer never trains while the embedding does
# family: H
# expect: ok
# verify: the scorer's weight is compared before and after the steps
# line: 23, 24
# fix: (fixed version of H161_bucketed_position_scorer_casts_its_score_to_long_for_an_embedding.py) weight the bucket embeddings by a softmax over the scorer's logits (or use a straight-through estimator) instead of an integer cast
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Bucketed(nn.Module):
    def __init__(self, d=6, buckets=4):
        super().__init__()
        self.scorer = nn.Linear(d, 1)
        self.emb = nn.Embedding(buckets, d)
        self.out = nn.Linear(d, 1)
        self.buckets = buckets

    def forward(self, x):
        w = torch.softmax(self.scorer(x) * torch.arange(1.0, self.buckets + 1), dim=-1)
        return self.out(x + w @ self.emb.weight)


if __name__ == "__main__":
    model = Bucketed()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    before = model.scorer.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the scorer never moves" if torch.equal(before, model.scorer.weight) else "MATCH")

# source: the "double where" workaround discussed in https://github.com/pytorch/pytorch/issues/68425 and https://github.com/jax-ml/jax/issues/347 (take the sqrt of a value that is safe in the unselected branch: sqrt(where(d > 0, d, 1))); used here for pairwise distances in a triplet loss, where the diagonal is exactly zero
# family: G
# expect: ok
# line: 17
# fix: none needed - the unselected branch of the outer torch.where is finite, so its gradient is zero, not nan
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pairwise_distances(emb):
    sq = emb.pow(2).sum(1)
    d2 = (sq[:, None] - 2 * emb @ emb.t() + sq[None, :]).clamp(min=0.0)
    safe = torch.where(d2 > 0, d2, torch.ones_like(d2))
    return torch.where(d2 > 0, torch.sqrt(safe), torch.zeros_like(d2))


def batch_hard_triplet(emb, labels, margin=0.5):
    d = pairwise_distances(emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (d * same).max(dim=1).values
    hardest_neg = (d + 1e6 * same).min(dim=1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for step in range(3):
        x, labels = torch.randn(12, 10), torch.arange(4).repeat(3)
        loss = batch_hard_triplet(net(x), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        finite = all(torch.isfinite(p.grad).all() for p in net.parameters())
        print("step", step, "loss", round(loss.item(), 4), "finite grads", finite)
        if not finite:
            print("MISMATCH: non-finite gradient")

# source: batch-hard triplet mining (omoindrot/tensorflow-triplet-loss _pairwise_distances, which adds a small epsilon before the sqrt for this reason) ported with torch.where: torch.where(d2 > 0, d2.sqrt(), 0) still back-propagates sqrt's infinite derivative at the zero diagonal, 0 * inf = nan, and the embedding's gradient is nan
# family: H
# expect: silent
# verify: the embedding network's gradient after the batch-hard triplet loss: non-finite entries mean the update is nan
# line: 16
# fix: keep the unselected branch finite: take the square root of d2.clamp_min(1e-12) inside the where
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pairwise_distances(emb):
    d2 = (emb.unsqueeze(1) - emb.unsqueeze(0)).pow(2).sum(-1)
    dist = torch.where(d2 > 0, d2.sqrt(), torch.zeros_like(d2))
    return dist


def batch_hard_triplet(emb, labels, margin=0.3):
    dist = pairwise_distances(emb)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    hardest_pos = (dist * same).max(1).values
    hardest_neg = (dist + 1e6 * same).min(1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    x, labels = torch.randn(12, 10), torch.arange(4).repeat(3)
    loss = batch_hard_triplet(net(x), labels)
    opt.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in net.parameters())
    opt.step()
    print("loss %.4f" % loss.item())
    print("MATCH" if finite else "MISMATCH: nan gradient from the zero diagonal of the distance matrix")

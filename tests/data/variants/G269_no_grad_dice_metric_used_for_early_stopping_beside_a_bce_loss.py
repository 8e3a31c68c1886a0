# source: segmentation loops that compute a @torch.no_grad() Dice score on the same logits for logging / early stopping while the loss is BCE alone: the metric is never part of the loss, so no gradient is meant to flow through it
# family: G
# expect: ok
# verify: the last conv's gradient is compared with the BCE term's gradient alone (they must agree)
# line: 14
# fix: none needed: the no_grad metric is only logged
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.no_grad()
def dice_score(logits, target, eps=1.0):
    prob = logits.sigmoid()
    inter = (prob * target).sum()
    return (2 * inter + eps) / (prob.sum() + target.sum() + eps)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(2, 1, 8, 8)
    mask = (torch.rand(2, 1, 8, 8) > 0.7).float()
    logits = net(x)
    loss = F.binary_cross_entropy_with_logits(logits, mask)
    g_bce = torch.autograd.grad(loss, net[2].weight, retain_graph=True)[0]
    opt.zero_grad()
    loss.backward()
    same = torch.allclose(net[2].weight.grad, g_bce)
    opt.step()
    print("dice %.3f" % dice_score(net(x), mask).item())
    print("MATCH" if same else "MISMATCH: the loss gradient differs from BCE's")

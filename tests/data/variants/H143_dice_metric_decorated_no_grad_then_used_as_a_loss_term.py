# source: segmentation code that reuses its evaluation Dice score, decorated @torch.no_grad(), as the Dice term of a BCE + Dice loss (forum threads "dice loss not decreasing", "combined loss behaves like BCE alone"): the metric returns a tensor without a graph, so 1 - dice adds a constant and the model trains on BCE alone
# family: H
# expect: silent
# verify: the last conv's gradient is compared with the BCE term's gradient alone
# line: 14
# fix: drop @torch.no_grad() from the function used as a loss (keep a no_grad copy for the metric)
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
    bce = F.binary_cross_entropy_with_logits(logits, mask)
    loss = bce + (1 - dice_score(logits, mask))
    g_bce = torch.autograd.grad(bce, net[2].weight, retain_graph=True)[0]
    opt.zero_grad()
    loss.backward()
    same = torch.allclose(net[2].weight.grad, g_bce)
    opt.step()
    print("MISMATCH: the Dice term adds no gradient" if same else "MATCH")

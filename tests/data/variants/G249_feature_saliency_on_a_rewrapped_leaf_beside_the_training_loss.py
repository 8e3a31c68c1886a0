# source: training loops that log per-feature saliency (gradient x input on the penultimate features, as in attribution dashboards): the features are re-wrapped as a new leaf, feats.detach().requires_grad_(), only for the saliency's autograd.grad, while the training loss goes through the live features
# family: G
# expect: ok
# line: 21
# fix: none needed: the re-wrapped leaf serves only the saliency, and the loss trains every parameter
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    trunk = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
    head = nn.Linear(16, 3)
    opt = torch.optim.SGD(list(trunk.parameters()) + list(head.parameters()), lr=0.1)
    start = trunk[0].weight.detach().clone()
    for step in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
        feats = trunk(x)
        probe = feats.detach().requires_grad_()
        score = head(probe).gather(1, y.unsqueeze(1)).sum()
        (grad,) = torch.autograd.grad(score, probe)
        saliency = (grad * probe).abs().mean(0)
        loss = F.cross_entropy(head(feats), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item(), "top feature", int(saliency.argmax()))
    moved = not torch.equal(start, trunk[0].weight.detach())
    print("MATCH" if moved else "MISMATCH: the trunk never trained")

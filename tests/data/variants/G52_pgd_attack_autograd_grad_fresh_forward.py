# source: PGD adversarial training (Madry et al.; TRADES / torchattacks style): x_adv rebuilt with .detach() every step and gradients taken with torch.autograd.grad
# family: G
# expect: ok
# line: 18  (backward: 31)
# fix: none needed - each attack step builds a fresh graph from a new leaf x_adv, autograd.grad frees only that graph, and x_adv is replaced out-of-place (detach + step + clamp) rather than modified in place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pgd(model, x, y, eps=8 / 255, alpha=2 / 255, steps=3):
    x_adv = x.detach() + 0.001 * torch.randn_like(x)
    for _ in range(steps):
        x_adv.requires_grad_()
        loss = F.cross_entropy(model(x_adv), y)
        grad = torch.autograd.grad(loss, [x_adv])[0]
        x_adv = x_adv.detach() + alpha * torch.sign(grad.detach())
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0.0, 1.0)
    return x_adv.detach()


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.rand(4, 3, 8, 8), torch.randint(0, 10, (4,))
    x_adv = pgd(model, x, y)
    loss = F.cross_entropy(model(x_adv), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

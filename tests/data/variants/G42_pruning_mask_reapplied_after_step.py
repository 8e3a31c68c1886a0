# source: lottery-ticket / iterative magnitude pruning loops that zero the pruned gradients after backward and re-apply the weight mask after optimizer.step() under torch.no_grad()
# family: G
# expect: ok
# line: 28  (backward: 39)
# fix: none needed - the gradient mask is applied to p.grad (which does not require grad) after backward, and the weight mask is written under torch.no_grad() after the step, before the next forward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PrunedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(10, 32), nn.Linear(32, 4)
        self.masks = {}

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

    @torch.no_grad()
    def prune(self, amount=0.5):
        for name, p in self.named_parameters():
            if p.dim() == 2:
                thr = p.abs().flatten().kthvalue(int(amount * p.numel())).values
                self.masks[name] = (p.abs() > thr).float()
                p.mul_(self.masks[name])


if __name__ == "__main__":
    model = PrunedMLP()
    model.prune()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        for name, p in model.named_parameters():
            if name in model.masks:
                p.grad.mul_(model.masks[name])
        opt.step()
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name in model.masks:
                    p.mul_(model.masks[name])
    print("loss", loss.item())

# source: "magnitude pruning by hand" forum threads (layer.weight.mul_(mask) between fine-tuning epochs)
# family: A
# expect: error
# line: 20
# fix: apply the mask inside `with torch.no_grad():` (or use torch.nn.utils.prune)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def prune_by_magnitude(model, amount):
    masks = {}
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear):
            k = int(amount * m.weight.numel())
            thr = m.weight.detach().abs().flatten().kthvalue(k).values
            mask = (m.weight.detach().abs() > thr).float()
            m.weight.mul_(mask)
            masks[name] = mask
    return masks


def train_epoch(model, opt, data):
    for x, y in data:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(3)]
    for epoch in range(2):
        print("loss", train_epoch(model, opt, data))
        prune_by_magnitude(model, 0.5)

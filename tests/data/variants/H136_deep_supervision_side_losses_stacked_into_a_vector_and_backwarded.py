# source: deep-supervision / auxiliary-classifier training code that collects one loss per side output with torch.stack([criterion(o, y) for o in outputs]) and weights it (issues "grad can be implicitly created only for scalar outputs" in HED/U-Net++ ports): the stacked loss has one entry per head and backward() raises
# family: H
# expect: error
# line: 33  (backward: 34)
# fix: reduce the weighted side losses: loss = (weights * torch.stack([...])).sum()
import torch
import torch.nn as nn

torch.manual_seed(0)


class SideOutputNet(nn.Module):
    def __init__(self, d=8, n_cls=4, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.ReLU()) for _ in range(depth))
        self.heads = nn.ModuleList(nn.Linear(d, n_cls) for _ in range(depth))

    def forward(self, x):
        outputs = []
        for block, head in zip(self.blocks, self.heads):
            x = block(x)
            outputs.append(head(x))
        return outputs


if __name__ == "__main__":
    net = SideOutputNet()
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    weights = torch.tensor([0.25, 0.25, 0.5])
    x, y = torch.randn(10, 8), torch.randint(0, 4, (10,))
    opt.zero_grad()
    loss = weights * torch.stack([criterion(o, y) for o in net(x)])
    loss.backward()
    opt.step()
    print("loss", loss.sum().item())

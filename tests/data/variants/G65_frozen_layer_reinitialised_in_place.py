# source: transfer-learning scripts that freeze a pretrained block (requires_grad = False) and later rescale / re-initialise its weights in place, outside torch.no_grad()
# family: G
# expect: ok
# line: 28, 29  (backward: 38)
# fix: none needed - after requires_grad = False the parameters are leaves that do not require grad, so in-place writes on them are allowed; they happen before the forward that uses them
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.stem(x).mean((2, 3)))


def freeze_and_rescale(module, scale):
    for p in module.parameters():
        p.requires_grad = False
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            m.weight.mul_(scale)
            m.bias.zero_()


if __name__ == "__main__":
    model = Classifier()
    freeze_and_rescale(model.stem, 0.5)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    loss = F.cross_entropy(model(torch.randn(2, 3, 6, 6)), torch.tensor([0, 3]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

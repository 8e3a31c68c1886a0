# source: the reverse of https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18 (module.requires_grad = ... only sets a Python attribute; nn.Module.requires_grad_() exists since https://github.com/pytorch/pytorch/issues/20241): fine-tuning code freezes every parameter, then "unfreezes" the head with model.fc.requires_grad = True, so nothing requires grad ("element 0 of tensors does not require grad")
# family: H
# expect: error
# line: 27  (backward: 32)
# fix: unfreeze the head's parameters: model.fc.requires_grad_(True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.features(x))


if __name__ == "__main__":
    model = Backbone()
    for param in model.parameters():
        param.requires_grad = False
    model.fc.requires_grad = True
    optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.rand(4, 3, 8, 8), torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

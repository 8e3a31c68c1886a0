# source: forum "load only matching layers of a pretrained model": the snippet own_state = model.state_dict(); own_state[name].copy_(param) rewritten with dict(model.named_parameters()), whose entries are leaf Parameters that require grad
# family: A
# expect: error
# line: 29
# fix: copy into model.state_dict() entries (detached tensors) or wrap the loop in `with torch.no_grad():`
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).mean((2, 3)))


def load_matching(model, pretrained_state):
    own_state = dict(model.named_parameters())
    loaded = []
    for name, param in pretrained_state.items():
        if name in own_state and own_state[name].shape == param.shape:
            own_state[name].copy_(param)
            loaded.append(name)
    return loaded


if __name__ == "__main__":
    pretrained = Backbone(n_cls=10).state_dict()
    model = Backbone(n_cls=3)
    print("loaded", load_matching(model, pretrained))
    loss = F.cross_entropy(model(torch.randn(2, 3, 6, 6)), torch.tensor([0, 2]))
    loss.backward()
    print("loss", loss.item())

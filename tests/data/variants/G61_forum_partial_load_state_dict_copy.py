# source: the widely copied forum snippet for loading matching pretrained weights: own_state = model.state_dict(); own_state[name].copy_(param)
# family: G
# expect: ok
# line: 20  (backward: 28)
# fix: none needed - state_dict() returns detached tensors (keep_vars=False), so copy_ into them is not an in-place op on a leaf that requires grad, and it happens before any forward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def load_my_state_dict(model, state_dict):
    own_state = model.state_dict()
    for name, param in state_dict.items():
        if name not in own_state:
            continue
        if isinstance(param, nn.Parameter):
            param = param.data
        own_state[name].copy_(param)


if __name__ == "__main__":
    src = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 10))
    dst = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 10))
    load_my_state_dict(dst, src.state_dict())
    loss = F.cross_entropy(dst(torch.randn(4, 6)), torch.tensor([1, 2, 3, 4]))
    loss.backward()
    print("loss", loss.item())

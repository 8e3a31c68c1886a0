# source: https://github.com/facebookresearch/fairscale/issues/1126 ("Error Freezing Weights": module.weight.requires_grad = not freeze -> "you can only change requires_grad flags of leaf variables") and https://github.com/lucidrains/ema-pytorch/issues/20; with weight normalisation the layer's .weight is recomputed from weight_g/weight_v and is not a leaf
# family: H
# expect: error
# line: 23
# fix: freeze the layer's parameters (for p in module.parameters(): p.requires_grad = not freeze), which for weight norm are weight_g and weight_v
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=FutureWarning)
torch.manual_seed(0)


def build_model():
    return nn.Sequential(nn.utils.weight_norm(nn.Linear(12, 32)), nn.ReLU(), nn.utils.weight_norm(nn.Linear(32, 4)))


def set_frozen(model, freeze, last_trainable=1):
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    for module in linears[:-last_trainable]:
        module.weight.requires_grad = not freeze


if __name__ == "__main__":
    model = build_model()
    set_frozen(model, freeze=True)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

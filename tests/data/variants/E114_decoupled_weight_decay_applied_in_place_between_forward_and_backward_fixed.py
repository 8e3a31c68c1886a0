# source: hand-rolled decoupled weight decay (AdamW-style "p.mul_(1 - lr * wd)" under no_grad) added to a training loop with plain Adam, placed right after the forward pass (forum threads "modified by an inplace operation ... is at version 1" after adding weight decay): the layers saved their weights for backward, the decay bumps their versions, and backward raises
# family: E
# expect: ok
# line: 27, 28  (backward: 29)
# fix: (fixed version of E114_decoupled_weight_decay_applied_in_place_between_forward_and_backward.py) decay after the backward, next to the step: move the no_grad decay loop below loss.backward()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def decay_weights(model, lr, wd):
    for name, p in model.named_parameters():
        if name.endswith("weight"):
            p.mul_(1 - lr * wd)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 6), torch.randint(0, 2, (16,))
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        # decoupled weight decay
        with torch.no_grad():
            decay_weights(model, lr=1e-3, wd=0.01)
        opt.step()
    print("loss %.4f" % loss.item())

# source: early-stopping loops that keep the best weights with copy.deepcopy(model.state_dict()) and restore them with load_state_dict at the end (the transfer-learning tutorial's pattern): the optimizer is built over model.parameters(), and loading copies values into the same parameters
# family: G
# expect: ok
# line: 37
# fix: none needed: the state_dict copy is a checkpoint, never handed to the optimizer
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FactorModel(nn.Module):
    def __init__(self, n_users=20, n_items=30, k=4):
        super().__init__()
        self.users = nn.Embedding(n_users, k)
        self.items = nn.Embedding(n_items, k)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)


if __name__ == "__main__":
    model = FactorModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    u, i, r = torch.randint(0, 20, (64,)), torch.randint(0, 30, (64,)), torch.randn(64)
    start = model.items.weight.detach().clone()
    best_loss, best_state = float("inf"), None
    for epoch in range(4):
        opt.zero_grad()
        loss = F.mse_loss(model(u, i), r)
        loss.backward()
        opt.step()
        if loss.item() < best_loss:
            best_loss, best_state = loss.item(), copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    moved = not torch.equal(start, model.items.weight)
    print("best loss %.4f" % best_loss)
    print("MATCH" if moved else "MISMATCH: the item table never moves")

# source: matrix-factorisation recommenders whose optimizer is built from model.state_dict().values() (forum threads "loss goes down on the first batch only / weights never change"): state_dict returns detached tensors that share storage with the parameters, so the optimizer's tensors never get a gradient and step() changes nothing
# family: H
# expect: ok
# verify: the item table is compared before and after the SGD steps
# line: 27  (backward: 35)
# fix: (fixed version of H114_optimizer_built_over_state_dict_values.py) hand the optimizer the parameters themselves: torch.optim.SGD(model.parameters(), lr=0.5)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FactorModel(nn.Module):
    def __init__(self, n_users=20, n_items=30, k=4):
        super().__init__()
        self.users = nn.Embedding(n_users, k)
        self.items = nn.Embedding(n_items, k)
        self.global_bias = nn.Parameter(torch.zeros(1))

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1) + self.global_bias


if __name__ == "__main__":
    model = FactorModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    u = torch.randint(0, 20, (64,))
    i = torch.randint(0, 30, (64,))
    r = torch.randn(64)
    before = model.items.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        loss = F.mse_loss(model(u, i), r)
        loss.backward()
        opt.step()
    moved = not torch.equal(before, model.items.weight)
    print("loss %.4f" % loss.item())
    print("MATCH" if moved else "MISMATCH: the item table never moves")

# source: training loops that call optimizer.zero_grad() after optimizer.step() at the end of each iteration (the order of many Lightning-style manual loops): the gradients are cleared before the next backward, so every step uses exactly its own gradient
# family: G
# expect: ok
# verify: the first layer's weight is compared before and after the steps
# line: 23
# fix: none needed: zero_grad() follows step()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(20, 5), torch.randint(0, 3, (20,))
    before = model[0].weight.detach().clone()
    for epoch in range(3):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        print("epoch", epoch, "loss %.4f" % loss.item())
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")

# source: training loops that clear gradients after backward() and before step() (forum threads "loss not decreasing at all", "weights don't change after optimizer.step()"): zero_grad() (set_to_none) drops the gradients just computed, so every step() finds no gradient and the parameters never move
# family: H
# expect: silent
# verify: the first layer's weight is compared before and after the steps
# line: 22
# fix: clear before the backward: opt.zero_grad() at the top of the step (or after opt.step())
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
        opt.zero_grad()
        opt.step()
        print("epoch", epoch, "loss %.4f" % loss.item())
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")

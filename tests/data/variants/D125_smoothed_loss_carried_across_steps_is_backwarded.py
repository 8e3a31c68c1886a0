# source: training loops that backpropagate an exponentially smoothed loss to damp noisy batches (forum threads "Trying to backward through the graph a second time" with a running loss): the running value keeps the previous steps' graphs, which the first backward already freed
# family: D
# expect: error
# line: 26  (backward: 28)
# fix: carry the running value without its graph: smoothed = 0.9 * smoothed.detach() + 0.1 * loss
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

regressor = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(regressor.parameters(), lr=0.05)


def batches(n):
    for _ in range(n):
        x = torch.randn(16, 5)
        yield x, x.sum(1, keepdim=True)


if __name__ == "__main__":
    smoothed = torch.zeros(())
    for x, y in batches(4):
        loss = F.mse_loss(regressor(x), y)
        smoothed = 0.9 * smoothed + 0.1 * loss
        opt.zero_grad()
        smoothed.backward()
        opt.step()
    print("smoothed loss %.4f" % smoothed.item())

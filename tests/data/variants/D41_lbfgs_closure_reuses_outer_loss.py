# source: forum "LBFGS: Trying to backward through the graph a second time": the loss is computed once outside the closure, and LBFGS calls the closure several times per step
# family: D
# expect: error
# line: 16, 20
# fix: recompute the forward pass inside the closure: loss = criterion(model(x), y)
import torch
import torch.nn as nn

torch.manual_seed(0)


def fit_lbfgs(model, x, y, steps=2):
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
    for _ in range(steps):
        loss = criterion(model(x), y)

        def closure():
            optimizer.zero_grad()
            loss.backward()
            return loss

        optimizer.step(closure)
    return loss.item()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(20, 3)
    y = x.sum(1, keepdim=True) ** 2
    print("loss", fit_lbfgs(model, x, y))

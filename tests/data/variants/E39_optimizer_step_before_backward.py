# source: forum "one of the variables needed for gradient computation has been modified" from a loop that calls optimizer.step() before loss.backward() (zero_grad keeps zero-filled grads, so SGD updates the weights in place first)
# family: E
# expect: error
# line: 17  (backward: 18)
# fix: call loss.backward() before optimizer.step()
import torch
import torch.nn as nn

torch.manual_seed(0)


def fit(model, optimizer, loader, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = criterion(model(x), y)
        optimizer.step()
        loss.backward()
    return loss.item()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]
    print("loss", fit(model, optimizer, loader, nn.MSELoss()))

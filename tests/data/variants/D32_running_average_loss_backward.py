# source: forum "backprop the running average of the loss": epoch_loss += loss accumulates graphs across iterations and (epoch_loss / n).backward() walks the freed graphs of earlier batches
# family: D
# expect: error
# line: 21  (backward: 23)
# fix: backward the current batch loss only and accumulate a float for logging: epoch_loss += loss.item()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_batches(n=4):
    return [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(n)]


def train_one_epoch(model, optimizer, batches):
    epoch_loss = 0
    for i, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y)
        epoch_loss += loss
        optimizer.zero_grad()
        (epoch_loss / (i + 1)).backward()
        optimizer.step()
    return float(epoch_loss) / len(batches)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    print("epoch loss", train_one_epoch(model, optimizer, make_batches()))

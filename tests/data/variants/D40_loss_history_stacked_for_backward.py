# source: training scripts that keep a history of loss tensors (losses.append(loss)) and backpropagate a smoothed objective torch.stack(losses[-k:]).mean() every step; old entries carry graphs freed by earlier backward calls
# family: D
# expect: error
# line: 22  (backward: 25)
# fix: store loss.item() (or loss.detach()) in the history and call backward on the current loss only
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmoothedTrainer:
    def __init__(self, model, window=3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.losses = []
        self.window = window

    def step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        self.losses.append(loss)
        objective = torch.stack(self.losses[-self.window:]).mean()
        self.opt.zero_grad()
        objective.backward()
        self.opt.step()
        return objective.item()


if __name__ == "__main__":
    trainer = SmoothedTrainer(nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1)))
    for _ in range(3):
        print("objective", trainer.step(torch.randn(8, 5), torch.randn(8, 1)))

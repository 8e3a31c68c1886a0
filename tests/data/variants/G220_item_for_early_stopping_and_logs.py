# source: the running-loss bookkeeping of the PyTorch tutorials (running_loss += loss.item() * inputs.size(0)) with early stopping on the validation loss: every .item()/float() is read for logs and control flow, never added back into a loss
# family: G
# expect: ok
# line: 38
# fix: none needed - the numbers taken out with .item() do not flow back into the loss that is backwarded
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EarlyStopping:
    def __init__(self, patience=2):
        self.best, self.patience, self.bad = float("inf"), patience, 0

    def step(self, val_loss):
        if val_loss < self.best - 1e-4:
            self.best, self.bad = val_loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    stopper = EarlyStopping()
    x_val, y_val = torch.randn(16, 6), torch.randn(16, 1)
    for epoch in range(4):
        running_loss = 0.0
        for _ in range(3):
            x, y = torch.randn(16, 6), torch.randn(16, 1)
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running_loss += loss.item() * x.size(0)
        with torch.no_grad():
            val = float(F.mse_loss(model(x_val), y_val))
        print("epoch", epoch, "train %.4f val %.4f" % (running_loss / 48, val))
        if stopper.step(val):
            break

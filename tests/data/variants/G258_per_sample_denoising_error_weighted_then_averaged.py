# source: denoising autoencoders with nn.MSELoss(reduction="none") built in __init__ and per-sample importance weights: the per-sample error is weighted and then averaged to a scalar before backward
# family: G
# expect: ok
# line: 20
# fix: none needed: the weighted per-sample error is reduced to a scalar
import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, d))
        self.crit = nn.MSELoss(reduction="none")

    def reconstruction_loss(self, noisy, clean, weights):
        per_sample = self.crit(self.net(noisy), clean).mean(dim=1)
        return (per_sample * weights).sum() / weights.sum()


if __name__ == "__main__":
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    clean = torch.randn(8, 16)
    noisy = clean + 0.1 * torch.randn(8, 16)
    weights = torch.linspace(0.5, 1.5, 8)
    opt.zero_grad()
    loss = model.reconstruction_loss(noisy, clean, weights)
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())

# source: denoising autoencoders with the criterion built in __init__ as nn.MSELoss(reduction="none") (forum threads "grad can be implicitly created only for scalar outputs"): the loss helper averages over the feature dim only, leaving one value per sample, which is backwarded
# family: H
# expect: error
# line: 20  (backward: 30)
# fix: average over the batch as well: return per_value.mean()
import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, d))
        self.crit = nn.MSELoss(reduction="none")

    def reconstruction_loss(self, noisy, clean):
        per_value = self.crit(self.net(noisy), clean)
        return per_value.mean(dim=1)


if __name__ == "__main__":
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    clean = torch.randn(8, 16)
    noisy = clean + 0.1 * torch.randn(8, 16)
    opt.zero_grad()
    loss = model.reconstruction_loss(noisy, clean)
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())

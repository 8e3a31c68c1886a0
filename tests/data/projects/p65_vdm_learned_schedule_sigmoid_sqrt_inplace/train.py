import torch
import torch.nn as nn

from diffusion import GaussianDiffusion, LearnedNoiseSchedule

cfg = dict(dim=6, hidden=32, lr=1e-3, steps=3, batch=16)


def main():
    torch.manual_seed(0)
    denoiser = nn.Sequential(nn.Linear(cfg["dim"] + 1, cfg["hidden"]), nn.SiLU(), nn.Linear(cfg["hidden"], cfg["dim"]))
    model = GaussianDiffusion(denoiser, LearnedNoiseSchedule())
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for step in range(cfg["steps"]):
        x0 = torch.randn(cfg["batch"], cfg["dim"])
        loss = model.p_losses(x0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()

import torch
import torch.nn as nn

from diffusion.gaussian_diffusion import GaussianDiffusion

config = {"dim": 4, "hidden": 32, "lr": 1e-3, "train_num_steps": 3, "batch_size": 16}


class Trainer:
    def __init__(self, diffusion, cfg):
        self.diffusion = diffusion
        self.cfg = cfg
        self.opt = torch.optim.Adam(diffusion.parameters(), lr=cfg["lr"])

    def train(self):
        for step in range(self.cfg["train_num_steps"]):
            x0 = torch.rand(self.cfg["batch_size"], self.cfg["dim"]) * 2 - 1
            loss = self.diffusion.p_losses(x0)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            print(step, round(loss.item(), 4))
        samples = self.diffusion.sample(4, self.cfg["dim"])
        print("samples in range:", bool(samples.abs().max() <= 1.0))


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(config["dim"] + 1, config["hidden"]), nn.SiLU(), nn.Linear(config["hidden"], config["dim"]))
    Trainer(GaussianDiffusion(net), config).train()

"""Hydra-style entry point: the model and a partial optimizer are built from the config."""
import torch
import torch.nn.functional as F

from conf.config import cfg
from utils.instantiate import instantiate


def main(cfg):
    torch.manual_seed(0)
    model = instantiate(cfg["model"])
    optimizer = instantiate(cfg["optim"])(model.parameters())
    batch_size = cfg["trainer"]["batch_size"]
    for step in range(cfg["trainer"]["max_steps"]):
        x = torch.randn(batch_size, cfg["model"]["in_dim"])
        y = torch.randint(0, cfg["model"]["num_classes"], (batch_size,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main(cfg)

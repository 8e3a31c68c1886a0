import torch

from networks import build_network
from optim import make_adam
from trainer import GANTrainer

CONFIG = {"generator": "mlp_generator", "discriminator": "mlp_discriminator", "z_dim": 4, "data_dim": 6}


def run(config, iters=3):
    torch.manual_seed(0)
    G = build_network(config["generator"], z_dim=config["z_dim"], out_dim=config["data_dim"])
    D = build_network(config["discriminator"], in_dim=config["data_dim"])
    trainer = GANTrainer(G, D, make_adam(G.parameters()), make_adam(D.parameters()), config["z_dim"])
    for i in range(iters):
        real = torch.randn(8, config["data_dim"]) * 0.5 + 1.0
        d_loss, g_loss = trainer.step(real)
        print(f"iter {i}: d {d_loss:.4f} g {g_loss:.4f}")

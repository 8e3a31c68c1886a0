import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=8, width=32, n_blocks=2, out_dim=16):
        super().__init__()
        self.n_blocks = n_blocks
        d = z_dim
        for i in range(n_blocks):
            setattr(self, f"fc{i}", nn.Linear(d, width))
            setattr(self, f"act{i}", nn.ReLU(inplace=True))
            d = width
        self.out = nn.Linear(d, out_dim)

    def forward(self, z):
        h = z
        for i in range(self.n_blocks):
            h = getattr(self, f"act{i}")(getattr(self, f"fc{i}")(h))
        return self.out(h).tanh()


def discriminator(in_dim=16):
    return nn.Sequential(nn.Linear(in_dim, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1))

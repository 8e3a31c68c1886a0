import torch


class TwoCropsTransform:
    """Two noisy views of the same sample."""

    def __init__(self, sigma=0.1):
        self.sigma = sigma

    def __call__(self, x):
        return x + self.sigma * torch.randn_like(x), x + self.sigma * torch.randn_like(x)

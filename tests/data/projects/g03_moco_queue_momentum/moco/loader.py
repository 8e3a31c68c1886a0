import torch


class TwoCropsTransform:
    def __init__(self, noise=0.1):
        self.noise = noise

    def __call__(self, x, generator):
        return (x + self.noise * torch.randn(x.shape, generator=generator),
                x + self.noise * torch.randn(x.shape, generator=generator))

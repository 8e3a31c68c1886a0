import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class CheckpointWrapper(nn.Module):
    def __init__(self, module, enabled=True):
        super().__init__()
        self.module = module
        self.enabled = enabled

    def forward(self, x):
        if self.enabled and self.training:
            return checkpoint(self.module, x, use_reentrant=False)
        return self.module(x)

import torch.nn as nn

from utils.checkpointing import maybe_checkpoint


class BackboneMixin:
    """Adds a patch-embedding stem and a stack of blocks; each block may be checkpointed."""

    def build_backbone(self, in_dim, width, depth, grad_checkpointing=False):
        self.stem = nn.Linear(in_dim, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU()) for _ in range(depth)
        )
        self.grad_checkpointing = grad_checkpointing

    def forward_features(self, x):
        x = maybe_checkpoint(self.stem, x, self.grad_checkpointing)
        for block in self.blocks:
            x = x + maybe_checkpoint(block, x, self.grad_checkpointing)
        return x

import torch
import torch.nn as nn

from seglite.registry import Registry

BLOCKS = Registry("block")


def make_act(cfg):
    cfg = dict(cfg)
    return getattr(nn, cfg.pop("type"))(**cfg)


@BLOCKS.register
class GatedBlock(nn.Module):
    """A sigmoid gate sharpened by a clamp (a squeeze-excitation-like gate)."""

    def __init__(self, channels, gate_act):
        super().__init__()
        self.proj = nn.Conv2d(channels, channels, 3, padding=1)
        self.gate = nn.Conv2d(channels, channels, 1)
        self.clamp = make_act(gate_act)

    def forward(self, x):
        feat = self.proj(x)
        g = torch.sigmoid(self.gate(feat))
        g = self.clamp(g)
        return feat * g

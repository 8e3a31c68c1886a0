import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc, anchors, ch):
        super().__init__()
        self.nc, self.na = nc, len(anchors)
        self.no = nc + 5
        self.register_buffer("anchors", torch.tensor(anchors))
        self.m = nn.Conv2d(ch, self.no * self.na, 1)

    def forward(self, x):
        bs, _, ny, nx = x.shape
        return self.m(x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, cfg["ch"], 3, 2, 1), nn.SiLU())
        self.detect = Detect(cfg["nc"], cfg["anchors"], cfg["ch"])

    def forward(self, x):
        return self.detect(self.backbone(x))

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from byol.ema import update_moving_average
from byol.networks import Encoder, mlp


def regression_loss(p, z):
    p = F.normalize(p, dim=-1)
    z = F.normalize(z, dim=-1)
    return 2 - 2 * (p * z).sum(dim=-1).mean()


class BYOL(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.online = Encoder(cfg["in_dim"], cfg["hidden"], cfg["proj"])
        self.predictor = mlp(cfg["proj"], cfg["hidden"], cfg["proj"])
        self.target = copy.deepcopy(self.online)
        self.tau = cfg["tau"]

    def trainable_parameters(self):
        return list(self.online.parameters()) + list(self.predictor.parameters())

    def forward(self, view1, view2):
        p1 = self.predictor(self.online(view1))
        p2 = self.predictor(self.online(view2))
        with torch.no_grad():
            z1 = self.target(view1)
            z2 = self.target(view2)
        return regression_loss(p1, z2) + regression_loss(p2, z1)

    def update_target(self):
        update_moving_average(self.target, self.online, self.tau)

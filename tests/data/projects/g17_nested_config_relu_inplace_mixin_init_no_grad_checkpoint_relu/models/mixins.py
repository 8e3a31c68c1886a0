import torch
import torch.nn as nn


class InitWeightsMixin:
    init_std = 0.02

    @torch.no_grad()
    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, self.init_std)
                m.bias.zero_()

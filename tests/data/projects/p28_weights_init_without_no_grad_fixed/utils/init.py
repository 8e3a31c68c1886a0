import math

import torch
import torch.nn as nn


@torch.no_grad()
def kaiming_init(m):
    if isinstance(m, nn.Conv2d):
        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
        m.weight.normal_(0, math.sqrt(2.0 / fan_out))
        if m.bias is not None:
            m.bias.zero_()
    elif isinstance(m, nn.BatchNorm2d):
        m.weight.fill_(1)
        m.bias.zero_()
    elif isinstance(m, nn.Linear):
        m.bias.zero_()

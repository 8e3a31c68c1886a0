import torch.nn as nn


def conv_block(in_ch, out_ch):
    """Two 1x1 convs with a ReLU between (a 3x3 UNet block, shrunk)."""
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 1),
        nn.ReLU(),
        nn.Conv2d(out_ch, out_ch, 1),
    )


def attention_gate(ch):
    """Attention-UNet gate: a 1x1 conv squashed to (0, 1)."""
    return nn.Sequential(nn.Conv2d(ch, 1, 1), nn.Sigmoid())

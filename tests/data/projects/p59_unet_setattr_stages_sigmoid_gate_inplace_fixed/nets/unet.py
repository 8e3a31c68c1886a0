import torch.nn as nn

from .blocks import attention_gate, conv_block


class GatedUNet(nn.Module):
    def __init__(self, in_ch=3, base=8, depth=3, n_classes=2):
        super().__init__()
        self.depth = depth
        ch = in_ch
        for i in range(depth):
            setattr(self, f"enc{i}", conv_block(ch, base))
            setattr(self, f"gate{i}", attention_gate(base))
            ch = base
        self.head = nn.Conv2d(base, n_classes, 1)

    def forward(self, x):
        for i in range(self.depth):
            x = getattr(self, f"enc{i}")(x)
            att = getattr(self, f"gate{i}")(x)
            # sharpen the attention map before gating (saves a buffer)
            att = att.mul(2.0).clamp(max=1.0)
            x = x * att
        return self.head(x)

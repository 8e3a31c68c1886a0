# source: Attention U-Net (Oktay et al.) attention gates that rescale the encoder skip features in place (x.mul_(psi)) before concatenation; the skip tensor was already saved by the encoder's max-pool and by the gate's own 1x1 conv
# family: B
# expect: error
# line: 27  (backward: 53)
# fix: return skip * alpha (out-of-place)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class AttentionGate(nn.Module):
    def __init__(self, c_skip, c_gate, c_int):
        super().__init__()
        self.W_x = nn.Conv2d(c_skip, c_int, 1)
        self.W_g = nn.Conv2d(c_gate, c_int, 1)
        self.psi = nn.Conv2d(c_int, 1, 1)

    def forward(self, skip, gate):
        a = F.relu(self.W_x(skip) + self.W_g(gate))
        alpha = torch.sigmoid(self.psi(a))
        return skip.mul_(alpha)


class AttentionUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc1 = conv_block(1, c)
        self.enc2 = conv_block(c, 2 * c)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.att = AttentionGate(c, c, c // 2)
        self.dec1 = conv_block(2 * c, c)
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        d1 = self.up(e2)
        e1 = self.att(e1, d1)
        return self.out(self.dec1(torch.cat([e1, d1], dim=1)))


if __name__ == "__main__":
    net = AttentionUNet()
    img = torch.randn(2, 1, 16, 16)
    mask = (torch.rand(2, 1, 16, 16) > 0.5).float()
    loss = F.binary_cross_entropy_with_logits(net(img), mask)
    loss.backward()
    print("dice-free bce", round(loss.item(), 4))

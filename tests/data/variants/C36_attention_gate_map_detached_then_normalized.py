# source: Attention U-Net style gates that keep `psi.detach()` for TensorBoard and min-max normalise it in place before backward (detach() shares the version counter with the sigmoid output)
# family: C
# expect: error
# line: 41, 42  (backward: 52)
# fix: keep a real copy for logging: self.last_map = psi.detach().clone()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttentionGate(nn.Module):
    def __init__(self, f_g=8, f_x=8, f_int=4):
        super().__init__()
        self.W_g = nn.Conv2d(f_g, f_int, 1)
        self.W_x = nn.Conv2d(f_x, f_int, 1)
        self.psi = nn.Conv2d(f_int, 1, 1)
        self.last_map = None

    def forward(self, g, x):
        psi = torch.sigmoid(self.psi(F.relu(self.W_g(g) + self.W_x(x))))
        self.last_map = psi.detach()
        return x * psi


class TinyUNetStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.gate = AttentionGate()
        self.dec = nn.Conv2d(8, 1, 1)

    def forward(self, img):
        skip = F.relu(self.enc(img))
        return self.dec(self.gate(skip, skip))


def log_attention(model, store):
    m = model.gate.last_map
    m -= m.min()
    m /= m.max() + 1e-8
    store.append(m)


if __name__ == "__main__":
    model = TinyUNetStage()
    img, target = torch.randn(2, 3, 8, 8), torch.rand(2, 1, 8, 8)
    maps = []
    loss = F.binary_cross_entropy_with_logits(model(img), target)
    log_attention(model, maps)
    loss.backward()
    print("loss", loss.item())

# source: quantisation-aware-training layers (DoReFa / XNOR ports) that implement the straight-through estimator by cloning the weight and overwriting the clone's .data with the quantised values before the conv/linear
# family: G
# expect: ok
# line: 21  (backward: 35)
# fix: none needed - the .data write happens on a fresh clone before any op has used it, so backward sees consistent values; the gradient equals the detach-trick STE w + (q(w) - w).detach() (checked below)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def quantize(w, bits=2):
    scale = w.abs().max() / (2 ** (bits - 1) - 0.5)
    return torch.round(w / scale).clamp(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) * scale


class QLinear(nn.Linear):
    def forward(self, x):
        w_q = self.weight.clone()
        w_q.data = quantize(self.weight.data)
        return F.linear(x, w_q, self.bias)


class QLinearRef(nn.Linear):
    def forward(self, x):
        w = self.weight
        return F.linear(x, w + (quantize(w.detach()) - w).detach(), self.bias)


def grads(cls):
    torch.manual_seed(0)
    model = nn.Sequential(cls(6, 8), nn.ReLU(), cls(8, 2))
    x = torch.randn(5, 6)
    model(x).pow(2).sum().backward()
    return [p.grad for p in model.parameters()]


if __name__ == "__main__":
    got, ref = grads(QLinear), grads(QLinearRef)
    ok = all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    print("MATCH" if ok else "MISMATCH")

# source: quantization-aware-training code that fake-quantizes weights with torch.round and no straight-through estimator: round's derivative is zero, so the weights only receive gradient through the scale (https://github.com/eladhoffer/quantized.pytorch/issues/5 on the STE, https://github.com/pytorch/ao/pull/4806 "silently disabling the straight-through estimator that QAT depends on")
# family: H
# expect: silent
# verify: the weight gradient is compared with the straight-through-estimator gradient of the same quantized forward
# line: 16
# fix: pass the gradient straight through the rounding: q = w + (torch.round(w / scale) * scale - w).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fake_quant(w, bits=4):
    scale = w.detach().abs().max() / (2 ** (bits - 1) - 1)
    return torch.round(w / scale) * scale


class QuantLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, fake_quant(self.weight), self.bias)


if __name__ == "__main__":
    layer = QuantLinear(8, 4)
    x, y = torch.randn(16, 8), torch.randn(16, 4)
    loss = F.mse_loss(layer(x), y)
    (got,) = torch.autograd.grad(loss, layer.weight)
    scale = layer.weight.detach().abs().max() / 7
    w_q = torch.round(layer.weight.detach() / scale) * scale
    w_ste = layer.weight + (w_q - layer.weight).detach()
    (ref,) = torch.autograd.grad(F.mse_loss(F.linear(x, w_ste, layer.bias), y), layer.weight)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH: round() blocks the weight gradient (max |grad| = %.3g)" % got.abs().max())

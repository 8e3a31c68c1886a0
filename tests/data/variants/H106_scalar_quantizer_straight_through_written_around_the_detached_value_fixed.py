# source: finite-scalar-quantization / LFQ autoencoder re-implementations (issues "encoder weights never change with my straight-through estimator"): the straight-through value is written as bounded.detach() + (rounded - bounded.detach()), so the only path to the encoder is round(), whose derivative is 0
# family: H
# expect: ok
# verify: the encoder weight is compared before and after five Adam steps
# line: 24  (backward: 38)
# fix: (fixed version of H106_scalar_quantizer_straight_through_written_around_the_detached_value.py) keep the live value outside the detach: return bounded + (snapped - bounded).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScalarQuantAE(nn.Module):
    def __init__(self, d_in=12, levels=5):
        super().__init__()
        self.enc = nn.Linear(d_in, 4)
        self.dec = nn.Linear(4, d_in)
        self.half = (levels - 1) / 2

    def quantize(self, z):
        bounded = torch.tanh(z) * self.half
        snapped = bounded.round()
        return bounded + (snapped - bounded).detach()

    def forward(self, x):
        return self.dec(self.quantize(self.enc(x)) / self.half)


if __name__ == "__main__":
    ae = ScalarQuantAE()
    opt = torch.optim.Adam(ae.parameters(), lr=1e-2)
    x = torch.randn(32, 12)
    before = ae.enc.weight.detach().clone()
    for _ in range(5):
        opt.zero_grad()
        loss = F.mse_loss(ae(x), x)
        loss.backward()
        opt.step()
    moved = not torch.equal(before, ae.enc.weight)
    print("loss %.4f" % loss.item())
    print("MATCH" if moved else "MISMATCH: the encoder never moves")

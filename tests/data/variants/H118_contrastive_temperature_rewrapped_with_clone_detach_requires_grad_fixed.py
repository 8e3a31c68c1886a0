# source: CLIP / InfoNCE heads with a learnable inverse temperature, written after the UserWarning "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach().requires_grad_(True)" (forum threads "learnable temperature stays at its initial value"): the scale is re-made as a new leaf inside forward, so the log-temperature the optimizer holds never receives a gradient
# family: H
# expect: ok
# verify: the log-temperature is compared before and after the Adam steps
# line: 23  (backward: 36)
# fix: (fixed version of H118_contrastive_temperature_rewrapped_with_clone_detach_requires_grad.py) use the parameter itself: scale = self.log_inv_tau.exp()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ContrastiveHead(nn.Module):
    def __init__(self, d=16, k=8):
        super().__init__()
        self.proj = nn.Linear(d, k)
        self.log_inv_tau = nn.Parameter(torch.tensor(2.0))

    def forward(self, a, b):
        za = F.normalize(self.proj(a), dim=-1)
        zb = F.normalize(self.proj(b), dim=-1)
        scale = self.log_inv_tau.exp()
        return scale * za @ zb.t()


if __name__ == "__main__":
    head = ContrastiveHead()
    opt = torch.optim.Adam(head.parameters(), lr=0.05)
    a = torch.randn(12, 16)
    b = a + 0.1 * torch.randn(12, 16)
    start = head.log_inv_tau.detach().clone()
    for _ in range(5):
        loss = F.cross_entropy(head(a, b), torch.arange(12))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())
    print("MISMATCH: the temperature never moved" if torch.equal(start, head.log_inv_tau.detach()) else "MATCH")

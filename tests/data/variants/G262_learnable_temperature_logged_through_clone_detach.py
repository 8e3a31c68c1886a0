# source: CLIP-style learnable temperature whose current value is copied with clone().detach() for a log line, while the logits use the parameter itself
# family: G
# expect: ok
# line: 24
# fix: none needed: only the logged copy is detached
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
        za, zb = F.normalize(self.proj(a), dim=-1), F.normalize(self.proj(b), dim=-1)
        return self.log_inv_tau.exp() * za @ zb.t()


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
        tau_log = head.log_inv_tau.exp().clone().detach()
    print("tau %.4f" % (1.0 / tau_log))
    print("MISMATCH: the temperature never moved" if torch.equal(start, head.log_inv_tau.detach()) else "MATCH")

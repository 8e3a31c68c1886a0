# source: CLIP-style contrastive heads that keep the learnable logit scale in range with self.logit_scale.clamp_(0, 4.6052) inside forward (forum threads "a leaf Variable that requires grad is being used in an in-place operation" with logit_scale): clamp_ on a Parameter outside no_grad raises
# family: A
# expect: ok
# line: 20
# fix: (fixed version of A107_learnable_logit_scale_clamped_in_place_in_the_forward.py) clamp under no_grad (with torch.no_grad(): self.logit_scale.clamp_(0, 4.6052)), or use a clamped copy: scale = self.logit_scale.clamp(0, 4.6052)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ContrastiveHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.logit_scale = nn.Parameter(torch.tensor(2.6593))

    def forward(self, a, b):
        with torch.no_grad():
            self.logit_scale.clamp_(0, 4.6052)
        za = F.normalize(self.proj(a), dim=1)
        zb = F.normalize(self.proj(b), dim=1)
        return self.logit_scale.exp() * za @ zb.t()


if __name__ == "__main__":
    head = ContrastiveHead()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    a, b = torch.randn(6, 8), torch.randn(6, 8)
    opt.zero_grad()
    logits = head(a, b)
    F.cross_entropy(logits, torch.arange(6)).backward()
    opt.step()
    print("scale", head.logit_scale.item())

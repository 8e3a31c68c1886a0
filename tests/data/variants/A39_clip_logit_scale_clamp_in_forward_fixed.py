# source: CLIP / open_clip training: the learnable temperature logit_scale must be clamped to ln(100); users put logit_scale.clamp_() in forward without torch.no_grad()
# family: A
# expect: ok
# line: 24
# fix: (fixed version of A39_clip_logit_scale_clamp_in_forward.py) clamp under torch.no_grad() (open_clip clamps it after optimizer.step() inside torch.no_grad())
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ContrastiveHead(nn.Module):
    def __init__(self, d_img=12, d_txt=10, d=8):
        super().__init__()
        self.img_proj = nn.Linear(d_img, d, bias=False)
        self.txt_proj = nn.Linear(d_txt, d, bias=False)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, img, txt):
        with torch.no_grad():
            self.logit_scale.clamp_(0, math.log(100))
        i = F.normalize(self.img_proj(img), dim=-1)
        t = F.normalize(self.txt_proj(txt), dim=-1)
        logits = self.logit_scale.exp() * i @ t.t()
        labels = torch.arange(img.size(0))
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


if __name__ == "__main__":
    head = ContrastiveHead()
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3)
    for _ in range(2):
        loss = head(torch.randn(5, 12), torch.randn(5, 10))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())

import math

import torch
import torch.nn as nn


class TinyCLIP(nn.Module):
    def __init__(self, img_dim=10, txt_dim=6, emb=8):
        super().__init__()
        self.visual = nn.Linear(img_dim, emb)
        self.text = nn.Linear(txt_dim, emb)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, texts):
        return self.visual(images), self.text(texts)

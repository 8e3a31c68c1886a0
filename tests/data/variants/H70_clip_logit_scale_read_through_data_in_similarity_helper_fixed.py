# source: the learnable CLIP temperature of mlfoundations/open_clip (logit_scale = nn.Parameter(log(1/0.07)), used as logit_scale.exp()), in the shape users report as "logit_scale does not change during training": a similarity helper reads logit_scale.data.exp(), so the temperature never gets a gradient
# family: H
# expect: ok
# verify: the learnable temperature's .grad after a backward: None means it never trains
# line: 17
# fix: (fixed version of H70_clip_logit_scale_read_through_data_in_similarity_helper.py) use the parameter itself in the similarity (logit_scale.exp()), not its .data
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def similarity(img, txt, logit_scale):
    img, txt = F.normalize(img, dim=-1), F.normalize(txt, dim=-1)
    return logit_scale.exp() * img @ txt.t()


class TinyClip(nn.Module):
    def __init__(self, d_img=12, d_txt=10, d=8):
        super().__init__()
        self.visual = nn.Linear(d_img, d)
        self.text = nn.Linear(d_txt, d)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, tokens):
        return similarity(self.visual(images), self.text(tokens), self.logit_scale)


if __name__ == "__main__":
    model = TinyClip()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(4):
        images, tokens = torch.randn(6, 12), torch.randn(6, 10)
        logits = model(images, tokens)
        labels = torch.arange(6)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f scale %.4f" % (loss.item(), model.logit_scale.exp().item()))
    g = model.logit_scale.grad
    print("MATCH" if g is not None and g.abs().item() > 0 else "MISMATCH: logit_scale got no gradient, the temperature never trains")

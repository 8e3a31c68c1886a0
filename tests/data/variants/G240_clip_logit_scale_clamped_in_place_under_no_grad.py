# source: open_clip's training loop (with torch.no_grad(): unwrap(model).logit_scale.clamp_(0, math.log(100))) - the learnable temperature is used with its graph and only clamped outside it
# family: G
# expect: ok
# line: 36
# fix: none needed - the clamp writes the parameter under no_grad after the step, the loss uses logit_scale.exp() with its graph
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyClip(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual, self.text = nn.Linear(12, 8), nn.Linear(10, 8)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, tokens):
        img, txt = F.normalize(self.visual(images), dim=-1), F.normalize(self.text(tokens), dim=-1)
        return self.logit_scale.exp() * img @ txt.t()


if __name__ == "__main__":
    model = TinyClip()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(4):
        logits = model(torch.randn(6, 12), torch.randn(6, 10))
        labels = torch.arange(6)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        print("step", step, "scale %.4f" % model.logit_scale.exp().item())
    grads = [p.grad for p in model.parameters()]
    print("MATCH" if all(g is not None and torch.isfinite(g).all() for g in grads) else "MISMATCH: a parameter got no gradient")

# source: linear-probe / partial fine-tuning code that freezes the backbone with torch.set_grad_enabled(train_backbone) and picks the [CLS] row inside that block (forum threads "A view was created in no_grad mode and is being modified inplace with grad mode enabled"): the row view is made with grad off, then scaled in place by a learned vector after the block
# family: C
# expect: error
# line: 24, 25
# fix: scale out of place: cls = cls * self.cls_scale (or take the row after the block)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Probe(nn.Module):
    def __init__(self, d=8, n_cls=3, train_backbone=False):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, d), nn.GELU(), nn.Linear(d, d))
        self.cls_scale = nn.Parameter(torch.ones(d))
        self.head = nn.Linear(d, n_cls)
        self.train_backbone = train_backbone

    def forward(self, tokens):
        with torch.set_grad_enabled(self.train_backbone):
            feats = self.backbone(tokens)
            cls = feats[:, 0]
        cls.mul_(self.cls_scale)
        return self.head(cls)


if __name__ == "__main__":
    probe = Probe()
    opt = torch.optim.SGD([probe.cls_scale, *probe.head.parameters()], lr=0.1)
    tokens, y = torch.randn(5, 4, 6), torch.randint(0, 3, (5,))
    loss = F.cross_entropy(probe(tokens), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())

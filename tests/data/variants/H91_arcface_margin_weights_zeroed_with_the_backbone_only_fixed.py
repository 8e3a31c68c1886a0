# source: ArcFace training in the layout of ronghuaiyang/arcface-pytorch (a backbone plus a separate ArcMarginProduct 'metric_fc' whose weight is a class-centre matrix, both in one optimizer): the loop calls backbone.zero_grad() instead of optimizer.zero_grad(), so the margin head's gradients are never cleared and every step adds the previous ones
# family: H
# expect: ok
# verify: the margin head's .grad after the last step is compared with that step's own gradient (recorded by a tensor hook)
# line: 39
# fix: (fixed version of H91_arcface_margin_weights_zeroed_with_the_backbone_only.py) clear every tensor the optimizer steps: optimizer.zero_grad()
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ArcMarginProduct(nn.Module):
    def __init__(self, in_features, out_features, s=30.0, m=0.5):
        super().__init__()
        self.s, self.m = s, m
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, embeddings, label):
        cosine = F.linear(F.normalize(embeddings), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - cosine.pow(2)).clamp(1e-6, 1.0))
        phi = cosine * math.cos(self.m) - sine * math.sin(self.m)
        one_hot = F.one_hot(label, cosine.shape[1]).float()
        return self.s * (one_hot * phi + (1.0 - one_hot) * cosine)


if __name__ == "__main__":
    backbone = nn.Sequential(nn.Linear(20, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
    metric_fc = ArcMarginProduct(16, 10)
    optimizer = torch.optim.SGD([{"params": backbone.parameters()}, {"params": metric_fc.parameters()}], lr=0.1)
    seen = []
    metric_fc.weight.register_hook(lambda g: seen.append(g.clone()))
    for step in range(3):
        x, y = torch.randn(16, 20), torch.randint(0, 10, (16,))
        loss = F.cross_entropy(metric_fc(backbone(x), y), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss %.4f" % loss.item())
    same = torch.allclose(metric_fc.weight.grad, seen[-1])
    print("MATCH" if same else "MISMATCH: the margin head's .grad holds the sum of every step's gradient")

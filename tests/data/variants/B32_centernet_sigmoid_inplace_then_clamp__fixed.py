# source: CenterNet-style heatmap heads (`_sigmoid`: torch.clamp(x.sigmoid_(), 1e-4, 1 - 1e-4)) rewritten to clamp the sigmoid output in place
# family: B
# expect: ok
# line: 20  (backward: 39)
# fix: (fixed version of B32_centernet_sigmoid_inplace_then_clamp_.py) clamp out-of-place: heat = torch.clamp(heat, min=1e-4, max=1 - 1e-4) (sigmoid_ keeps its result for backward)
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenterHead(nn.Module):
    def __init__(self, c=8, n_cls=3):
        super().__init__()
        self.hm = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, n_cls, 1))
        self.wh = nn.Conv2d(c, 2, 1)

    def forward(self, feat):
        heat = self.hm(feat).sigmoid_()
        heat = torch.clamp(heat, min=1e-4, max=1 - 1e-4)
        return heat, self.wh(feat)


def focal_loss(pred, gt, alpha=2, beta=4):
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * torch.pow(1 - pred, alpha) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, alpha) * torch.pow(1 - gt, beta) * neg
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)


if __name__ == "__main__":
    head = CenterHead()
    feat = torch.randn(2, 8, 6, 6)
    gt = torch.rand(2, 3, 6, 6) * 0.9
    gt[0, 1, 2, 3] = 1.0
    heat, wh = head(feat)
    loss = focal_loss(heat, gt) + wh.abs().mean()
    loss.backward()
    print("loss", loss.item())

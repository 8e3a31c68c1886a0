# source: https://github.com/xingyizhou/CenterNet/blob/master/src/lib/models/utils.py (`_sigmoid`: torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4))
# family: G
# expect: ok
# line: 13  (backward: 32)
# fix: none needed - sigmoid_ runs on the conv output (the conv saved its input, not its output) and the clamp afterwards is out-of-place, so the tensor SigmoidBackward needs is never rewritten
import torch
import torch.nn as nn

torch.manual_seed(0)


def _sigmoid(x):
    y = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return y


class CenterNetHead(nn.Module):
    def __init__(self, c=8, n_cls=3):
        super().__init__()
        self.hm = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, n_cls, 1))
        self.reg = nn.Conv2d(c, 2, 1)

    def forward(self, feat):
        return {"hm": _sigmoid(self.hm(feat)), "reg": self.reg(feat)}


if __name__ == "__main__":
    head = CenterNetHead()
    out = head(torch.randn(2, 8, 6, 6))
    gt = torch.rand(2, 3, 6, 6)
    loss = -(gt * torch.log(out["hm"]) + (1 - gt) * torch.log(1 - out["hm"])).mean() + out["reg"].abs().mean()
    loss.backward()
    print("loss", loss.item())

import argparse
import copy

import torch

from models.cfg import MODEL_CFG
from models.yolo import Model
from utils.general import bbox_iou
from utils.loss import ComputeLoss


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr0", type=float, default=0.01)
    return parser.parse_args()


def reference_loss(model, imgs, targets):
    """The same loss with a differentiable decode."""
    p = model(imgs)
    pos = targets[..., 2] > 0
    anchors = model.detect.anchors[pos.nonzero()[:, 1]]
    pp = p[pos]
    pbox = torch.cat((pp[:, :2].sigmoid() * 2 - 0.5, (pp[:, 2:4].sigmoid() * 2) ** 2 * anchors), -1)
    iou = bbox_iou(pbox, targets[pos])
    tobj = torch.zeros_like(p[..., 4])
    tobj[pos] = iou.detach().clamp(0)
    return (1.0 - iou).mean() + torch.nn.BCEWithLogitsLoss()(p[..., 4], tobj)


def main(opt):
    torch.manual_seed(0)
    model = Model(MODEL_CFG)
    probe = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr0, momentum=0.937, nesterov=True)
    compute_loss = ComputeLoss(model)
    imgs = torch.randn(2, 3, 8, 8)
    targets = torch.zeros(2, 2, 4, 4, 4)
    targets[0, 0, 1, 2] = torch.tensor([0.5, 0.5, 2.0, 3.0])
    targets[1, 1, 3, 0] = torch.tensor([0.2, 0.8, 4.0, 4.0])
    loss, items = compute_loss(model(imgs), targets)
    optimizer.zero_grad()
    loss.backward()
    reference_loss(probe, imgs, targets).backward()
    ok = all(torch.allclose(a.grad, b.grad, atol=1e-6) for a, b in zip(model.parameters(), probe.parameters()))
    optimizer.step()
    print("MATCH" if ok else "MISMATCH: the box regression outputs get no gradient")


if __name__ == "__main__":
    main(parse_opt())

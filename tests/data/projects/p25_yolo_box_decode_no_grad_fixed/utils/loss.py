import torch
import torch.nn as nn

from utils.general import bbox_decode, bbox_iou


class ComputeLoss:
    def __init__(self, model):
        self.anchors = model.detect.anchors
        self.bce = nn.BCEWithLogitsLoss()

    def __call__(self, p, targets):
        """p: (bs, na, ny, nx, no); targets: (bs, na, ny, nx, 4) boxes, positives where w > 0."""
        pos = targets[..., 2] > 0
        pbox = bbox_decode(p[pos], self.anchors[pos.nonzero()[:, 1]])
        iou = bbox_iou(pbox, targets[pos])
        lbox = (1.0 - iou).mean()
        tobj = torch.zeros_like(p[..., 4])
        tobj[pos] = iou.detach().clamp(0)
        lobj = self.bce(p[..., 4], tobj)
        return lbox + lobj, torch.stack((lbox, lobj)).detach()

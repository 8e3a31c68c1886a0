import torch.nn as nn

from ..builder import build_activation_layer
from ..registry import HEADS


@HEADS.register_module()
class SharedConvHead(nn.Module):
    """Classification and box branches on one shared feature map."""

    def __init__(self, in_channels, num_classes, act_cfg):
        super().__init__()
        self.shared_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)
        self.conv_cls = nn.Conv2d(in_channels, num_classes, 1)
        self.reg_act = build_activation_layer(act_cfg)
        self.conv_reg = nn.Conv2d(in_channels, 4, 1)

    def forward(self, x):
        feat = self.shared_conv(x)
        cls_score = self.conv_cls(feat)
        bbox_pred = self.conv_reg(self.reg_act(feat))
        return cls_score, bbox_pred

    def loss(self, cls_score, bbox_pred, gt_labels, gt_boxes):
        loss_cls = nn.functional.cross_entropy(cls_score, gt_labels)
        loss_bbox = nn.functional.smooth_l1_loss(bbox_pred, gt_boxes)
        return dict(loss_cls=loss_cls, loss_bbox=loss_bbox)

import torch.nn as nn

from ..registry import BACKBONES, DETECTORS, HEADS


@DETECTORS.register_module()
class SingleStageDetector(nn.Module):
    def __init__(self, backbone, bbox_head):
        super().__init__()
        self.backbone = BACKBONES.build(backbone)
        self.bbox_head = HEADS.build(bbox_head)

    def forward_train(self, img, gt_labels, gt_boxes):
        cls_score, bbox_pred = self.bbox_head(self.backbone(img))
        return self.bbox_head.loss(cls_score, bbox_pred, gt_labels, gt_boxes)

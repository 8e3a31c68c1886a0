# source: https://github.com/open-mmlab/mmdetection/issues/3667 ("Freezing the backbone network will report an error": for v in self.backbone.parameters(): v.requires_grad = False and for v in self.bbox_head.parameters(): v.requires_grad = False in single_stage.py, then runner.outputs['loss'].backward() raises); a single-stage detector without a neck has no trainable parameter left
# family: H
# expect: ok
# line: 48  (backward: 68)
# fix: (fixed version of H64_detector_freezes_backbone_and_head_leaving_nothing.py) freeze only the backbone; keep the head trainable (drop the loop over self.bbox_head.parameters())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                    nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, img):
        return self.stages(img)


class AnchorFreeHead(nn.Module):
    def __init__(self, in_channels=16, num_classes=3):
        super().__init__()
        self.cls_conv = nn.Conv2d(in_channels, num_classes, 3, padding=1)
        self.reg_conv = nn.Conv2d(in_channels, 4, 3, padding=1)

    def forward(self, feat):
        return self.cls_conv(feat), self.reg_conv(feat)

    def loss(self, cls_score, bbox_pred, gt_heatmap, gt_boxes):
        loss_cls = F.binary_cross_entropy_with_logits(cls_score, gt_heatmap)
        loss_bbox = F.l1_loss(bbox_pred, gt_boxes)
        return {"loss_cls": loss_cls, "loss_bbox": loss_bbox}


class SingleStageDetector(nn.Module):
    def __init__(self, freeze_backbone=True):
        super().__init__()
        self.backbone = Backbone()
        self.bbox_head = AnchorFreeHead()
        if freeze_backbone:
            self.freeze()

    def freeze(self):
        for v in self.backbone.parameters():
            v.requires_grad = False

    def forward_train(self, img, gt_heatmap, gt_boxes):
        cls_score, bbox_pred = self.bbox_head(self.backbone(img))
        return self.bbox_head.loss(cls_score, bbox_pred, gt_heatmap, gt_boxes)


def parse_losses(losses):
    return sum(v for v in losses.values())


if __name__ == "__main__":
    detector = SingleStageDetector()
    optimizer = torch.optim.SGD(detector.parameters(), lr=0.01, momentum=0.9)
    for it in range(2):
        img = torch.randn(2, 3, 32, 32)
        gt_heatmap = (torch.rand(2, 3, 8, 8) > 0.9).float()
        gt_boxes = torch.rand(2, 4, 8, 8)
        loss = parse_losses(detector.forward_train(img, gt_heatmap, gt_boxes))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("iter", it, "loss", round(loss.item(), 4))

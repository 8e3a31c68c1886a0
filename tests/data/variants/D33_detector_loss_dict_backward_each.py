# source: detection training loops that call backward on every entry of the loss dict (loss_cls, loss_box) of one forward pass; the second call walks the freed backbone graph
# family: D
# expect: error
# line: 36
# fix: sum the losses and call backward once: sum(loss_dict.values()).backward()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyDetector(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls_head = nn.Linear(8, n_cls)
        self.box_head = nn.Linear(8, 4)

    def forward(self, images, targets):
        feats = self.backbone(images)
        return {
            "loss_cls": F.cross_entropy(self.cls_head(feats), targets["labels"]),
            "loss_box": F.smooth_l1_loss(self.box_head(feats), targets["boxes"]),
        }


if __name__ == "__main__":
    model = TinyDetector()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(2, 3, 8, 8)
    targets = {"labels": torch.tensor([1, 3]), "boxes": torch.rand(2, 4)}
    loss_dict = model(images, targets)
    optimizer.zero_grad()
    for name, loss in loss_dict.items():
        loss.backward()
    optimizer.step()
    print({k: v.item() for k, v in loss_dict.items()})

# source: the fine-tuning recipe behind https://github.com/open-mmlab/mmdetection/issues/3667 and https://github.com/SSL92/hyperIQA/issues/32 done right: the backbone is frozen, the new head stays trainable, and the trainable parameters are collected once into a list that every rebuilt optimizer reuses
# family: G
# expect: ok
# line: 26
# fix: none needed - the head requires grad, and the parameter selection is a list, not an exhausted iterator
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


if __name__ == "__main__":
    model = Classifier()
    for p in model.backbone.parameters():
        p.requires_grad = False
    trainable = list(filter(lambda p: p.requires_grad, model.parameters()))
    lr = 0.1
    head_before = model.head.weight.detach().clone()
    for epoch in range(3):
        opt = torch.optim.SGD(trainable, lr=lr, momentum=0.9)
        x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lr *= 0.5
        print("epoch", epoch, "loss", round(loss.item(), 4))
    print("MATCH" if not torch.equal(head_before, model.head.weight) else "MISMATCH: the head never moved")

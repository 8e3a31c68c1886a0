# source: GPU-side batch augmentation (normalise, Cutout, input mixup) applied in place to the input tensor before the forward pass
# family: G
# expect: ok
# line: 17, 21, 24  (backward: 35)
# fix: none needed - the input batch does not require grad and every in-place write (sub_/div_, cutout setitem, mixup mul_/add_) happens before the model has seen it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MEAN = torch.tensor([0.49, 0.48, 0.45]).view(1, 3, 1, 1)
STD = torch.tensor([0.25, 0.24, 0.26]).view(1, 3, 1, 1)


def augment_(images, size=3, lam=0.8):
    images.sub_(MEAN).div_(STD)
    n, _, h, w = images.shape
    for i in range(n):
        cy, cx = torch.randint(0, h, (1,)).item(), torch.randint(0, w, (1,)).item()
        images[i, :, max(cy - size, 0):cy + size, max(cx - size, 0):cx + size] = 0.0
    perm = torch.randperm(n)
    shuffled = images[perm]
    images.mul_(lam).add_(shuffled, alpha=1 - lam)
    return perm


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    images, labels = torch.rand(4, 3, 12, 12), torch.randint(0, 10, (4,))
    perm = augment_(images)
    logits = model(images)
    loss = 0.8 * F.cross_entropy(logits, labels) + 0.2 * F.cross_entropy(logits, labels[perm])
    loss.backward()
    print("loss", loss.item())

# source: feature-level Cutout / random spatial erasing on CNN feature maps, written through a flattened view of the ReLU output (flat = feat.flatten(2); flat[:, :, idx] = 0)
# family: C
# expect: ok
# line: 27  (backward: 35)
# fix: (fixed version of C35_feature_erasing_through_flatten_view.py) erase out-of-place: feat = feat * keep.view(1, 1, H, W) (the flattened view shares the ReLU output that ReluBackward needs)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ErasingNet(nn.Module):
    def __init__(self, c=8, n_cls=4, n_erase=5):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.head = nn.Linear(c, n_cls)
        self.n_erase = n_erase

    def forward(self, x):
        feat = F.relu(self.conv(x))
        if self.training:
            flat = feat.flatten(2)
            idx = torch.randperm(flat.size(-1))[: self.n_erase]
            keep = torch.ones(flat.size(-1))
            keep[idx] = 0.0
            feat = feat * keep.view(1, 1, *feat.shape[2:])
        return self.head(feat.mean((2, 3)))


if __name__ == "__main__":
    net = ErasingNet().train()
    x, y = torch.randn(2, 3, 6, 6), torch.tensor([1, 3])
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    print("loss", loss.item())

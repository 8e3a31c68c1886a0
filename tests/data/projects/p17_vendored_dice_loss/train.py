import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "third_party"))

from segloss import DiceLoss  # noqa: E402
from unet import TinyUNet  # noqa: E402


def main():
    torch.manual_seed(0)
    model = TinyUNet()
    criterion = DiceLoss(smooth=1.0, ignore_index=255)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(2):
        images = torch.randn(2, 1, 8, 8)
        masks = (torch.rand(2, 2, 8, 8) > 0.5).long()
        masks[:, :, :2] = 255
        loss = criterion(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iter {it}: dice loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

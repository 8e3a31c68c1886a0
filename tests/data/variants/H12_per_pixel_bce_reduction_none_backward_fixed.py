# source: https://github.com/xxlong0/SparseNeuS/issues/42 ("RuntimeError: grad can be implicitly created only for scalar outputs" at loss.backward()); here a segmentation loss built with reduction="none" for a per-pixel weight map is backpropagated without reducing it
# family: H
# expect: ok
# line: 19, 21
# fix: (fixed version of H12_per_pixel_bce_reduction_none_backward.py) reduce the weighted per-pixel loss to a scalar before backward: loss = (criterion(logits, masks) * weights).mean()
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    criterion = nn.BCEWithLogitsLoss(reduction="none")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        images, masks = torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()
        weights = 1.0 + 4.0 * masks
        loss = (criterion(model(images), masks) * weights).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.mean().item())

# source: class/pixel-weighted segmentation losses (nn.BCEWithLogitsLoss(reduction="none") multiplied by a weight map and averaged before backward), the correct form of https://github.com/xxlong0/SparseNeuS/issues/42's failing pattern
# family: G
# expect: ok
# line: 14
# fix: none needed - the weighted per-pixel loss is reduced to a scalar before backward
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    criterion = nn.BCEWithLogitsLoss(reduction="none")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        images, masks = torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()
        per_pixel = criterion(model(images), masks)
        loss = (per_pixel * (1.0 + 4.0 * masks)).sum() / (1.0 + 4.0 * masks).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())

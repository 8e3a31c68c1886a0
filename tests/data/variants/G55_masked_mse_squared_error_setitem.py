# source: depth / keypoint regression losses that square the error and zero the invalid pixels in place before averaging (sq_err[~valid] = 0)
# family: G
# expect: ok
# line: 14  (backward: 23)
# fix: none needed - `** 2` saves its input (the difference), not its output, so zeroing entries of the squared error in place is safe
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_mse(pred, target, valid):
    sq_err = (pred - target) ** 2
    sq_err[~valid] = 0.0
    return sq_err.sum() / valid.sum().clamp(min=1)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    img, depth = torch.randn(2, 3, 8, 8), torch.rand(2, 1, 8, 8) * 10
    valid = depth > 1.0
    loss = masked_mse(net(img), depth, valid)
    loss.backward()
    print("loss", loss.item())

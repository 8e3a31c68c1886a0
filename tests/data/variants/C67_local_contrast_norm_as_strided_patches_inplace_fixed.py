# source: hand-written local contrast normalisation / local mean-centring layers that build k x k neighbourhoods with Tensor.as_strided (stride 1, so neighbourhoods overlap) and centre them in place with `patches -= patches.mean(...)`; every pixel is shared by up to k*k patches and gets centred several times
# family: C
# expect: ok
# line: 28  (backward: 44)
# fix: (fixed version of C67_local_contrast_norm_as_strided_patches_inplace.py) centre out-of-place: patches = patches - patches.mean(dim=(-2, -1), keepdim=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def neighbourhoods(x, k):
    B, C, H, W = x.shape
    sB, sC, sH, sW = x.stride()
    return x.as_strided((B, C, H - k + 1, W - k + 1, k, k), (sB, sC, sH, sW, sH, sW))


class LocalMeanCentre(nn.Module):
    def __init__(self, c_in=1, c_out=2, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, img):
        x = self.conv(img)
        patches = neighbourhoods(x, self.k)
        patches = patches - patches.mean(dim=(-2, -1), keepdim=True)
        centre = patches[..., self.k // 2, self.k // 2]
        return centre.pow(2).mean()


def reference(model, img):
    x = model.conv(img)
    k = model.k
    local_mean = F.avg_pool2d(x, k, stride=1)
    centre = x[..., k // 2:x.size(-2) - k // 2, k // 2:x.size(-1) - k // 2] - local_mean
    return centre.pow(2).mean()


if __name__ == "__main__":
    model = LocalMeanCentre()
    img = torch.randn(2, 1, 8, 8)
    model(img).backward()
    got = model.conv.weight.grad.clone()
    model.zero_grad()
    reference(model, img).backward()
    ref = model.conv.weight.grad
    print("MATCH" if torch.allclose(got, ref, atol=1e-5) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())

# source: local-normalisation / patch-feature code that extracts overlapping k x k patches with unfold, flattens them with reshape (which has to copy, the unfolded view is not contiguous) and then centres the copy in place
# family: G
# expect: ok
# line: 24
# fix: none needed - reshape of the overlapping unfold view materialises a copy, so the in-place centring touches each element once and nothing saved the copy before the write
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchCentre(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, img):
        x = self.conv(img)
        B, C, H, W = x.shape
        k = self.k
        patches = x.unfold(2, k, 1).unfold(3, k, 1).reshape(B, C, H - k + 1, W - k + 1, k * k)
        patches -= patches.mean(-1, keepdim=True)
        return patches[..., (k * k) // 2].pow(2).mean()


def reference(model, img):
    x = model.conv(img)
    k = model.k
    centre = x[..., k // 2:x.size(-2) - k // 2, k // 2:x.size(-1) - k // 2] - F.avg_pool2d(x, k, stride=1)
    return centre.pow(2).mean()


if __name__ == "__main__":
    model = PatchCentre()
    img = torch.randn(2, 1, 8, 8)
    model(img).backward()
    got = model.conv.weight.grad.clone()
    model.zero_grad()
    reference(model, img).backward()
    ref = model.conv.weight.grad
    print("MATCH" if torch.allclose(got, ref, atol=1e-5) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())

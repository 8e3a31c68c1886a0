# source: https://github.com/jantic/DeOldify/issues/116 ("'detach' flag is 'True' when calling hook_outputs() in class DynamicUnetWide": the skip connections are taken from forward hooks that store output.detach(), "the back-propagation will stop at the skip-connections"); fastai's hook_outputs(detach=True) default, https://github.com/fastai/fastai/pull/1103
# family: H
# expect: silent
# verify: the encoder's gradients are compared with autograd's gradients of the same U-Net whose skips keep their graph
# line: 22  (backward: 71)
# fix: store the hooked activation itself (self.stored = output), not a detached copy, when the decoder trains through it (fastai: hook_outputs(..., detach=False))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Hook:
    """Keeps the last output of a module (fastai-style)."""

    def __init__(self, module):
        self.stored = None
        self.handle = module.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, inputs, output):
        self.stored = output.detach()

    def remove(self):
        self.handle.remove()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU())
        self.block2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.bottleneck = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())

    def forward(self, x):
        return self.bottleneck(self.block2(self.block1(x)))


class DynamicUnet(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.skips = [Hook(encoder.block1), Hook(encoder.block2)]
        self.up2 = nn.Conv2d(8 + 8, 4, 3, padding=1)
        self.up1 = nn.Conv2d(4 + 4, 1, 3, padding=1)

    def forward(self, x):
        h = self.encoder(x)
        h = F.interpolate(h, scale_factor=2.0)
        h = F.relu(self.up2(torch.cat([h, self.skips[1].stored], dim=1)))
        h = F.interpolate(h, scale_factor=2.0)
        return self.up1(torch.cat([h, self.skips[0].stored], dim=1))


def reference_forward(unet, x):
    enc = unet.encoder
    s1 = enc.block1(x)
    s2 = enc.block2(s1)
    h = F.interpolate(enc.bottleneck(s2), scale_factor=2.0)
    h = F.relu(unet.up2(torch.cat([h, s2], dim=1)))
    return unet.up1(torch.cat([F.interpolate(h, scale_factor=2.0), s1], dim=1))


if __name__ == "__main__":
    unet = DynamicUnet(Encoder())
    opt = torch.optim.Adam(unet.parameters(), lr=1e-3)
    for step in range(3):
        gray, target = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
        loss = F.mse_loss(unet(gray), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    gray, target = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
    watched = list(unet.encoder.block1.parameters())
    got = torch.autograd.grad(F.mse_loss(unet(gray), target), watched)
    ref = torch.autograd.grad(F.mse_loss(reference_forward(unet, gray), target), watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the first encoder block gets no gradient through its skip connection; difference",
              max((g - r).abs().max().item() for g, r in zip(got, ref)))

# source: fastai's hook_outputs(modules, detach=False) for U-Net skip connections (https://github.com/fastai/fastai/pull/1103, https://github.com/jantic/DeOldify/issues/116): the decoder trains through the hooked encoder features; a detached copy is kept only for the activation statistics that are logged
# family: G
# expect: ok
# line: 23
# fix: none needed - the skip features keep their graph; only the logged statistics are detached
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SkipHooks:
    def __init__(self, modules):
        self.stored = [None] * len(modules)
        self.stats = {}
        for i, m in enumerate(modules):
            m.register_forward_hook(self.make_hook(i))

    def make_hook(self, i):
        def hook(module, inputs, output):
            self.stored[i] = output
            self.stats[i] = output.detach().abs().mean().item()
        return hook


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU())
        self.down2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.skips = SkipHooks([self.down1])
        self.up = nn.Conv2d(8 + 4, 1, 3, padding=1)

    def forward(self, x):
        h = self.down2(self.down1(x))
        h = F.interpolate(h, scale_factor=2.0)
        return self.up(torch.cat([h, self.skips.stored[0]], dim=1))


if __name__ == "__main__":
    model = UNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4), "skip activation", round(model.skips.stats[0], 4))

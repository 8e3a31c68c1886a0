# source: DeepInversion (NVlabs/DeepInversion: DeepInversionFeatureHook stores the batch-norm statistics loss computed from the hooked input) synthesising images from a frozen classifier: each hooked BatchNorm runs once per forward and the hook stores a loss term that keeps its graph to the input images, so the regulariser does train the images
# family: G
# expect: ok
# line: 22
# fix: none needed: the hooks keep the graph and every BatchNorm is called once per forward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BNStatsHook:
    def __init__(self, module):
        self.r_feature = None
        module.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, inputs, output):
        x = inputs[0]
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False)
        self.r_feature = torch.norm(module.running_var - var, 2) + torch.norm(module.running_mean - mean, 2)


if __name__ == "__main__":
    teacher = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                            nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
    teacher.eval().requires_grad_(False)
    hooks = [BNStatsHook(m) for m in teacher.modules() if isinstance(m, nn.BatchNorm2d)]
    images = torch.randn(4, 3, 16, 16, requires_grad=True)
    targets = torch.randint(0, 5, (4,))
    opt = torch.optim.Adam([images], lr=0.05)
    for it in range(3):
        opt.zero_grad()
        logits = teacher(images)
        loss_bn = sum(h.r_feature for h in hooks)
        loss = F.cross_entropy(logits, targets) + 0.1 * loss_bn
        loss.backward()
        opt.step()
        print("iter", it, "ce+bn %.4f" % loss.item())

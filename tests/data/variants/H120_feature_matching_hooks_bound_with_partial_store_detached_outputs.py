# source: GAN feature-matching losses (pix2pixHD / MelGAN style) whose discriminator features are collected by forward hooks bound per block with functools.partial (forum threads "feature matching loss does not change the generator"): the hook stores output.detach(), so the matching term is a constant for the generator
# family: H
# expect: silent
# verify: the generator's weight gradient is compared with the gradient of the adversarial term alone
# line: 26  (backward: 42)
# fix: keep the live output in the hook: self.feats[idx] = output
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.Tanh()) for _ in range(3)])
        self.out = nn.Linear(d, 1)
        self.feats = {}
        for i, blk in enumerate(self.blocks):
            blk.register_forward_hook(functools.partial(self._keep, i))

    def _keep(self, idx, module, inputs, output):
        self.feats[idx] = output.detach()

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.out(x)


if __name__ == "__main__":
    gen, critic = nn.Linear(8, 12), Critic()
    z, real = torch.randn(16, 8), torch.randn(16, 12)
    critic(real)
    real_feats = dict(critic.feats)
    fake_score = critic(gen(z))
    matching = sum((critic.feats[i] - real_feats[i]).abs().mean() for i in range(3))
    loss = -fake_score.mean() + 10.0 * matching
    loss.backward()
    adv_only = torch.autograd.grad(-critic(gen(z)).mean(), gen.weight)[0]
    print("loss %.4f" % loss.item())
    print("MISMATCH: feature matching adds no gradient" if torch.allclose(gen.weight.grad, adv_only) else "MATCH")

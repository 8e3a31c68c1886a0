# source: pix2pixHD's feature-matching loss (NVIDIA/pix2pixHD: L1 between the discriminator's intermediate features on the fake and on the real pair) with the features captured by forward hooks into one dict, as hook-based GAN training code does: 'feats_fake = features' keeps a reference to the dict, the discriminator's call on the real pair overwrites every slot, and the loss compares the real features with themselves
# family: H
# expect: ok
# verify: the feature-matching term's value and its gradient to the generator: zero means the term never trains the generator
# line: 44
# fix: (fixed version of H89_pix2pixhd_feature_matching_reads_one_hook_dict_twice.py) copy the hooked features before the second discriminator call: feats_fake = dict(features)
import functools
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchDiscriminator(nn.Module):
    def __init__(self, in_ch=6):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(in_ch, 8, 4, 2, 1), nn.LeakyReLU(0.2)),
            nn.Sequential(nn.Conv2d(8, 16, 4, 2, 1), nn.LeakyReLU(0.2)),
        ])
        self.out = nn.Conv2d(16, 1, 3, 1, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def save_output(module, inputs, output, store, key):
    store[key] = output


if __name__ == "__main__":
    gen = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
    net_d = PatchDiscriminator()
    features = {}
    for i, block in enumerate(net_d.blocks):
        block.register_forward_hook(functools.partial(save_output, store=features, key=i))
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    label, real = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
    fake = gen(label)
    pred_fake = net_d(torch.cat([label, fake], dim=1))
    feats_fake = dict(features)
    pred_real = net_d(torch.cat([label, real], dim=1))
    feats_real = features
    loss_gan = F.mse_loss(pred_fake, torch.ones_like(pred_fake))
    loss_fm = sum(F.l1_loss(feats_fake[k], feats_real[k].detach()) for k in feats_fake)
    fm_grad = torch.autograd.grad(loss_fm, gen[0].weight, retain_graph=True, allow_unused=True)[0]
    opt_g.zero_grad()
    (loss_gan + 10.0 * loss_fm).backward()
    opt_g.step()
    print("gan %.4f fm %.4f" % (loss_gan.item(), loss_fm.item()))
    ok = fm_grad is not None and fm_grad.abs().sum() > 0
    print("MATCH" if ok else "MISMATCH: the feature-matching term compares the real features with themselves (fm = %.4f)" % loss_fm.item())

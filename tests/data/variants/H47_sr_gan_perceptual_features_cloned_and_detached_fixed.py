# source: https://github.com/fastai/fastai/pull/981 ("Add detach option to hooks": a flag to skip the detach in hooks, needed by networks that train through the hooked features); the feature-extractor hook pattern of https://github.com/XPixelGroup/BasicSR/issues/50 (netF features of the fake image must keep their graph for the generator's feature loss)
# family: H
# expect: ok
# verify: the generator's gradient is compared with autograd's gradient of the same adversarial + perceptual loss computed on live features
# line: 45  (backward: 67)
# fix: (fixed version of H47_sr_gan_perceptual_features_cloned_and_detached.py) keep the hooked feature map's graph (self.feats = output); detach only the features of the real image
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3 * 4, 3, padding=1))
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, lr):
        return self.shuffle(self.body(lr))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


class PerceptualExtractor(nn.Module):
    """A frozen feature network; the features come out of a forward hook on relu2."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.requires_grad_(False)
        self.feats = None
        self.features[3].register_forward_hook(self._keep)

    def _keep(self, module, inputs, output):
        self.feats = output

    def forward(self, img):
        self.features(img)
        return self.feats


def generator_loss(gen, disc, extractor, lr_img, hr_img, w_perc=1.0):
    fake = gen(lr_img)
    adv = F.binary_cross_entropy_with_logits(disc(fake), torch.ones(fake.size(0), 1))
    fake_feat = extractor(fake)
    real_feat = extractor(hr_img).detach()
    return adv * 1e-3 + w_perc * F.l1_loss(fake_feat, real_feat)


if __name__ == "__main__":
    gen, disc, extractor = Generator(), Discriminator(), PerceptualExtractor()
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4)
    for step in range(3):
        lr_img, hr_img = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 16, 16)
        loss = generator_loss(gen, disc, extractor, lr_img, hr_img)
        opt_g.zero_grad()
        loss.backward()
        opt_g.step()
        print("step", step, "g loss", round(loss.item(), 4))

    lr_img, hr_img = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 16, 16)
    got = torch.autograd.grad(generator_loss(gen, disc, extractor, lr_img, hr_img), list(gen.parameters()))
    fake = gen(lr_img)
    ref_loss = (F.binary_cross_entropy_with_logits(disc(fake), torch.ones(2, 1)) * 1e-3
                + F.l1_loss(extractor.features(fake), extractor.features(hr_img)))
    ref = torch.autograd.grad(ref_loss, list(gen.parameters()))
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the perceptual term never reaches the generator; difference",
              max((g - r).abs().max().item() for g, r in zip(got, ref)))

# source: adversarial discriminative domain adaptation (ADDA, Tzeng et al.; the pytorch-adda training loops) with the discriminator's output on the target features computed once per batch: the discriminator is stepped, then the target encoder's loss reuses that output, and its backward through the updated discriminator weights raises the version-counter error
# family: E
# expect: ok
# line: 30, 31  (backward: 33)
# fix: (fixed version of E111_adda_encoder_loss_reuses_discriminator_output_after_its_step.py) recompute the discriminator's output on the target features after its step: g_loss = F.binary_cross_entropy_with_logits(disc(feat_t), torch.ones_like(d_out_t))
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    src_encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8))
    src_encoder.requires_grad_(False)
    tgt_encoder = copy.deepcopy(src_encoder).requires_grad_(True)
    disc = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
    opt_t = torch.optim.Adam(tgt_encoder.parameters(), lr=1e-4)
    for step in range(2):
        x_src, x_tgt = torch.randn(16, 20), torch.randn(16, 20) + 0.5
        feat_s = src_encoder(x_src)
        feat_t = tgt_encoder(x_tgt)
        d_out_s, d_out_t = disc(feat_s), disc(feat_t)
        d_loss = F.binary_cross_entropy_with_logits(d_out_s, torch.ones_like(d_out_s)) + \
            F.binary_cross_entropy_with_logits(d_out_t, torch.zeros_like(d_out_t))
        opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        opt_d.step()
        g_loss = F.binary_cross_entropy_with_logits(disc(feat_t), torch.ones_like(d_out_t))
        opt_t.zero_grad()
        g_loss.backward()
        opt_t.step()
        print("step", step, "d %.4f g %.4f" % (d_loss.item(), g_loss.item()))

import argparse

import torch
import torch.nn.functional as F

from models.nets import Generator, discriminator
from utils.misc import AverageMeter
from utils.pool import ImagePool

parser = argparse.ArgumentParser()
parser.add_argument("--iters", type=int, default=4)
parser.add_argument("--lr", type=float, default=2e-4)
args = parser.parse_args()

torch.manual_seed(0)
G, D = Generator(), discriminator()
opt_G = torch.optim.Adam(G.parameters(), lr=args.lr, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=args.lr, betas=(0.5, 0.999))
pool = ImagePool()
meter_D, meter_G = AverageMeter(), AverageMeter()


def adv(logits, target):
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


for it in range(args.iters):
    real = torch.rand(8, 16) * 2 - 1
    fake = G(torch.randn(8, 8))
    # D step on fakes from the history pool (detached there)
    loss_D = adv(D(real), 1.0) + adv(D(pool.query(fake)), 0.0)
    opt_D.zero_grad()
    loss_D.backward()
    opt_D.step()
    # G step runs D again on the current fakes
    loss_G = adv(D(fake), 1.0)
    opt_G.zero_grad()
    loss_G.backward()
    opt_G.step()
    meter_D.update(loss_D.item(), real.size(0))
    meter_G.update(loss_G.item(), real.size(0))
print(f"D {meter_D.avg:.4f} G {meter_G.avg:.4f}")

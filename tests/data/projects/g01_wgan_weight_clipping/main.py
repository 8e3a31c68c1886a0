import torch

from models import get_models
from utils.clip import clip_weights

OPT = {"arch": "mlp", "nz": 4, "dim": 6, "lrD": 5e-5, "lrG": 5e-5, "clamp": 0.01, "Diters": 3, "optim": "RMSprop"}


def main(opt, gen_iters=2):
    torch.manual_seed(0)
    netG, netD = get_models(opt["arch"], opt["nz"], opt["dim"])
    optim_cls = getattr(torch.optim, opt["optim"])
    optimizerD = optim_cls(netD.parameters(), lr=opt["lrD"])
    optimizerG = optim_cls(netG.parameters(), lr=opt["lrG"])
    one = torch.tensor([1.0])
    mone = one * -1
    for it in range(gen_iters):
        for p in netD.parameters():
            p.requires_grad = True
        for _ in range(opt["Diters"]):
            clip_weights(netD, opt["clamp"])
            netD.zero_grad()
            real = torch.randn(8, opt["dim"]) + 1.0
            netD(real).backward(one)
            with torch.no_grad():
                fake = netG(torch.randn(8, opt["nz"]))
            netD(fake).backward(mone)
            optimizerD.step()
        for p in netD.parameters():
            p.requires_grad = False
        netG.zero_grad()
        netD(netG(torch.randn(8, opt["nz"]))).backward(one)
        optimizerG.step()
        print(f"iter {it} done")


if __name__ == "__main__":
    main(OPT)

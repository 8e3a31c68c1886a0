# source: https://github.com/junyanz/BicycleGAN/issues/93 ("Incorrect discriminator update for opt.use_same_D" - closed: "when backward() is called twice, it accumulates into .grad, so the implementation is correct"): backward_D runs twice on the same D, each time on a fresh forward, before one optimizer step
# family: G
# expect: ok
# line: 17
# fix: none needed - the two backward calls go through two separate graphs and their gradients add up
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def backward_D(netD, real, fake):
    pred_fake = netD(fake.detach())
    pred_real = netD(real)
    loss = F.mse_loss(pred_fake, torch.zeros_like(pred_fake)) + F.mse_loss(pred_real, torch.ones_like(pred_real))
    loss.backward()
    return loss


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
    netD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=2e-4)
    for it in range(2):
        real_encoded, real_random = torch.randn(4, 16), torch.randn(4, 16)
        fake_encoded, fake_random = netG(torch.randn(4, 10)), netG(torch.randn(4, 10))
        optimizer_D.zero_grad()
        loss_D = backward_D(netD, real_encoded, fake_encoded)
        loss_D2 = backward_D(netD, real_random, fake_random)
        optimizer_D.step()
        print("iter", it, "loss_D", loss_D.item(), "loss_D2", loss_D2.item())

import torch


def d_step(netD, real, fake, optimizer, criterion):
    netD.zero_grad()
    label = torch.ones(real.size(0))
    err_real = criterion(netD(real), label)
    err_real.backward()
    label.fill_(0.0)
    output = netD(fake.detach())
    err_fake = criterion(output, label)
    err_fake.backward()
    optimizer.step()
    return (err_real + err_fake).item()


def g_step(netG, netD, fake, optimizer, criterion):
    netG.zero_grad()
    label = torch.ones(fake.size(0))
    output = netD(fake)
    err = criterion(output, label)
    err.backward()
    optimizer.step()
    return err.item()

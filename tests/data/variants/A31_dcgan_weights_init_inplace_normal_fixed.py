# source: pytorch/examples dcgan weights_init, written as m.weight.normal_() instead of m.weight.data.normal_() / nn.init (forum "leaf variable has been moved into the graph interior")
# family: A
# expect: ok
# line: 30, 32, 33
# fix: (fixed version of A31_dcgan_weights_init_inplace_normal.py) initialise through nn.init.normal_/zeros_ (they run under torch.no_grad()) or write to m.weight.data
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=4, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


if __name__ == "__main__":
    netG = Generator()
    netG.apply(weights_init)
    fake = netG(torch.randn(2, 8, 1, 1))
    fake.mean().backward()
    print("fake", tuple(fake.shape))

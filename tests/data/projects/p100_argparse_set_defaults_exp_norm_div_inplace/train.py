import torch

from nets.energy import EnergyNet
from options import parse


def main():
    torch.manual_seed(0)
    opts = parse()
    model = EnergyNet(opts)
    opt = torch.optim.Adam(model.parameters(), lr=opts.lr)
    x = torch.randn(5, opts.dim)
    for _ in range(opts.steps):
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

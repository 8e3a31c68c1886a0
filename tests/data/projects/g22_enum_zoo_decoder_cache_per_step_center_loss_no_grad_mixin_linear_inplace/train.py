import torch

from losses import get_loss
from models import ZOO, Arch


def main():
    torch.manual_seed(0)
    net = ZOO[Arch("token")]()
    criterion = get_loss("center", num_classes=3, feat_dim=8)
    opt = torch.optim.SGD(list(net.parameters()) + list(criterion.parameters()), lr=0.1)
    for _ in range(3):
        x = torch.randn(5, 4, 6)
        y = torch.randint(0, 3, (5,))
        loss = criterion(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

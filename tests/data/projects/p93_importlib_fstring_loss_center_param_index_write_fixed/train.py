import torch
import torch.nn as nn

from losses import get_loss

CONFIG = {"loss": "center", "num_classes": 4, "feat_dim": 8}


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, CONFIG["feat_dim"]))
    criterion = get_loss(CONFIG["loss"], num_classes=CONFIG["num_classes"], feat_dim=CONFIG["feat_dim"])
    opt = torch.optim.SGD(list(net.parameters()) + list(criterion.parameters()), lr=0.1)
    for _ in range(3):
        x = torch.randn(16, 6)
        y = torch.randint(0, CONFIG["num_classes"], (16,))
        loss = criterion(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

import torch
import torch.nn.functional as F

from configs import load_config
from models import GatedMLP


def main():
    torch.manual_seed(0)
    cfg = load_config("base")
    model = GatedMLP(cfg["in_dim"], cfg["hidden"], act_inplace=cfg["act_inplace"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    for _ in range(cfg["steps"]):
        x, y = torch.randn(8, cfg["in_dim"]), torch.randn(8, 1)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())


if __name__ == "__main__":
    main()

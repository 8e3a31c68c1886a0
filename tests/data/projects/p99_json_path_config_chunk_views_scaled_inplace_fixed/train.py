import torch

from attn import QKNet, load_config


def main():
    torch.manual_seed(0)
    cfg = load_config()
    model = QKNet(cfg["dim"], cfg["heads"], scale_inplace=cfg["scale_inplace"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    x = torch.randn(4, cfg["dim"])
    for _ in range(2):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

import torch

from net import build_net


def main():
    torch.manual_seed(0)
    model = build_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(5, 6)
    for _ in range(2):
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

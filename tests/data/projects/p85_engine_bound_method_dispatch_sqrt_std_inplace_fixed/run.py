import torch
import torch.nn as nn

from engine import Engine


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 6), nn.Tanh(), nn.Linear(6, 6))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    engine = Engine(model, optimizer)
    loader = [(torch.randn(16, 10), torch.randn(16)) for _ in range(3)]
    print(engine.run(loader, mode="train"))
    print(engine.run(loader, mode="eval"))


if __name__ == "__main__":
    main()

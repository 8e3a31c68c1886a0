import torch
import torch.nn as nn

from tasks.regression import RegressionTrainer


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = [(torch.randn(6, 4), torch.randn(6, 1)) for _ in range(3)]
    loss = RegressionTrainer(model, optimizer).fit(loader, epochs=2)
    print(loss.item())


if __name__ == "__main__":
    main()

import torch
import torch.nn as nn

from sam import SAM
from utils.steps import sam_update


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        inputs = torch.randn(16, 10)
        targets = torch.randint(0, 3, (16,))
        print(f"epoch {epoch}: loss {sam_update(model, optimizer, criterion, inputs, targets):.4f}")


if __name__ == "__main__":
    main()

import torch

from losses import pi_model_loss
from models import PiNet


def main(steps=2):
    torch.manual_seed(0)
    model = PiNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(8, 1, 8, 8)
    labels = torch.randint(0, 4, (8,))
    labelled = torch.arange(8) % 2 == 0
    for step in range(steps):
        loss = pi_model_loss(model(images), model(images), labels, labelled, w=10.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

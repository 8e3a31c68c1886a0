import torch
import torch.nn.functional as F

from nets import get_model
from utils.init import kaiming_init


def main():
    torch.manual_seed(0)
    model = get_model("small_cnn", num_classes=4)
    model.apply(kaiming_init)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(2):
        x, y = torch.randn(4, 1, 8, 8), torch.randint(0, 4, (4,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

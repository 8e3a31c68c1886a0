import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

from detkit import build_detector, build_loss  # noqa: E402


def main():
    torch.manual_seed(0)
    model = build_detector(num_classes=5)
    criterion = build_loss("focal", gamma=2.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for it in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 5, (8,))
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(it, loss.item())


if __name__ == "__main__":
    main()

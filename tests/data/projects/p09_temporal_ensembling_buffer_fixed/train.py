import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from convnet import ConvNet  # noqa: E402
from ensemble_buffer import EnsembleBuffer  # noqa: E402
from losses import temporal_loss  # noqa: E402

N, BATCH, CLASSES = 24, 8, 3


def main(epochs=2):
    torch.manual_seed(0)
    images = torch.randn(N, 1, 6, 6)
    labels = torch.randint(0, CLASSES, (N,))
    labelled = torch.zeros(N, dtype=torch.bool)
    labelled[::4] = True
    model = ConvNet(CLASSES)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    buffer = EnsembleBuffer(N, CLASSES)
    for epoch in range(epochs):
        weight = 0.0 if epoch == 0 else 1.0
        for start in range(0, N, BATCH):
            idx = torch.arange(start, start + BATCH)
            logits = model(images[idx])
            loss = temporal_loss(logits, buffer.targets[idx], labels[idx], labelled[idx], weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            buffer.update(idx, logits, epoch)
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

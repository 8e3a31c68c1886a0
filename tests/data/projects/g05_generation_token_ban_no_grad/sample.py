import torch
import torch.nn.functional as F

from generation import generate
from lm import TinyLM


def train_briefly(model, steps=3):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = torch.randint(0, 12, (4, 6))
    for _ in range(steps):
        hidden = torch.zeros(4, model.dim)
        loss = 0
        for t in range(5):
            logits, hidden = model.step(data[:, t], hidden)
            loss = loss + F.cross_entropy(logits, data[:, t + 1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM()
    train_briefly(model)
    out = generate(model, torch.tensor([[1, 2], [3, 4]]), 6, torch.Generator().manual_seed(0))
    print(out.tolist())

import torch
import torch.nn.functional as F

from models import create_model


def train_one_epoch(model, optimizer, batches):
    model.train()
    for step, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    model = create_model("tiny_vit_d1")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    batches = [(torch.randn(2, 9, 4), torch.randint(0, 4, (2,))) for _ in range(3)]
    train_one_epoch(model, optimizer, batches)

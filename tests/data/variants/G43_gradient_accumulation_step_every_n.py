# source: gradient-accumulation loops (HF Trainer style): (loss / accum_steps).backward() for every micro-batch, optimizer.step() and zero_grad() every accum_steps
# family: G
# expect: ok
# line: 21  (backward: 18)
# fix: none needed - every micro-batch has its own forward graph and backward runs once per graph; the step happens only after the backward passes that used the old weights
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def train(model, optimizer, batches, accum_steps=2):
    model.train()
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
    return loss.item() * accum_steps


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(torch.randn(4, 10), torch.randint(0, 3, (4,))) for _ in range(6)]
    print("loss", train(model, optimizer, batches))

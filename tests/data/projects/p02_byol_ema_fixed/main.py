import torch

from byol.learner import BYOL
from config import CFG


def augment(x, generator):
    return x + 0.1 * torch.randn(x.shape, generator=generator)


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model = BYOL(CFG)
    optimizer = getattr(torch.optim, CFG["optimizer"])(model.trainable_parameters(), lr=CFG["lr"])
    data = torch.randn(CFG["batch"], CFG["in_dim"])
    for step in range(CFG["steps"]):
        loss = model(augment(data, gen), augment(data, gen))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.update_target()
        print(f"step {step}: loss {loss.item():.4f}")

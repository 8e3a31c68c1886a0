import torch
import torch.nn.functional as F


def train_one_epoch(model, optimizer, ema, batches):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update()
    return loss.item()


def validate_with_ema(model, ema, x_val, y_val):
    ema.apply_shadow()
    with torch.no_grad():
        acc = (model(x_val).argmax(1) == y_val).float().mean().item()
    ema.restore()
    return acc

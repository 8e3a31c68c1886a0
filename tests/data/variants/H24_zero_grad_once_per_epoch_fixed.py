# source: https://github.com/pytorch/pytorch/issues/47175 ("forgetting to call zero_grad() or calling it at the beginning of each epoch instead of the beginning of each iteration")
# family: H
# expect: ok
# verify: the parameters after one epoch are compared with the same epoch that clears the gradients every iteration
# line: 18, 21
# fix: (fixed version of H24_zero_grad_once_per_epoch.py) clear the gradients in every iteration of the batch loop, not once per epoch
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def train_epoch(model, optimizer, batches):
    model.train()

    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
    reference = copy.deepcopy(model)
    batches = [(torch.randn(10, 6), torch.randn(10, 2)) for _ in range(4)]
    train_epoch(model, torch.optim.Adam(model.parameters(), lr=1e-2), batches)
    ref_opt = torch.optim.Adam(reference.parameters(), lr=1e-2)
    for x, y in batches:
        ref_opt.zero_grad()
        F.mse_loss(reference(x), y).backward()
        ref_opt.step()
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), reference.parameters()))
    print("MATCH" if ok else "MISMATCH: gradients accumulated over the epoch")

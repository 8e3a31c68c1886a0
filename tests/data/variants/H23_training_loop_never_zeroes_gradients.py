# source: https://github.com/pytorch/pytorch/issues/47175 ("[feature request] Show warning if optimizer.zero_grad() was not called before optimizer.step()": "It is easy to introduce an extremely nasty bug in your code by forgetting to call zero_grad()") and https://github.com/tenstorrent/tt-blacksmith/pull/711 ("we forgot to do zero_grad on optimizer after each optimizer step")
# family: H
# expect: silent
# verify: the parameters after training are compared with the same loop that clears the gradients every step
# line: 23
# fix: clear the gradients every iteration: optimizer.zero_grad() before loss.backward()
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, lr=0.05):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()


def reference_train(model, batches, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return model


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    reference = copy.deepcopy(model)
    batches = [(torch.randn(8, 8), torch.randint(0, 3, (8,))) for _ in range(4)]
    trainer = Trainer(model)
    for x, y in batches:
        trainer.train_step(x, y)
    reference_train(reference, batches)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), reference.parameters()))
    print("MATCH" if ok else "MISMATCH: gradients accumulated across steps")

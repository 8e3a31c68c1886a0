import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from fl.client import Client
from fl.server import average


def make_data(seed, n=3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(8, 5, generator=g), torch.randint(0, 3, (8,), generator=g)) for _ in range(n)]


def prox_grads(model, anchor, x, y, mu):
    """Reference: the FedProx objective's gradient with the global weights as constants."""
    model.zero_grad()
    prox = sum(((w - a.detach()) ** 2).sum() for w, a in zip(model.parameters(), anchor.parameters()))
    (F.cross_entropy(model(x), y) + mu / 2 * prox).backward()
    return [p.grad.clone() for p in model.parameters()]


if __name__ == "__main__":
    torch.manual_seed(0)
    global_model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    clients = [Client(copy.deepcopy(global_model), make_data(s)) for s in (1, 2)]
    for rnd in range(2):
        for c in clients:
            c.receive(global_model)
            c.local_update()
        global_model = average([c.model for c in clients])
    # one more local step, checked against the reference objective
    c = clients[0]
    c.receive(global_model)
    anchor = copy.deepcopy(global_model)
    c.local_update(epochs=1)
    x, y = c.data[0]
    c.optimizer.zero_grad()
    (F.cross_entropy(c.model(x), y) + c.mu / 2 * c.proximal()).backward()
    ours = [p.grad.clone() for p in c.model.parameters()]
    ref = prox_grads(c.model, anchor, x, y, c.mu)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, ref))
    print("MATCH" if ok else "MISMATCH: the proximal term does not pull towards the global weights")

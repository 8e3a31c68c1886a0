import random

import torch
import torch.nn.functional as F

from dqn.learner import Learner
from dqn.qnet import QNetwork
from dqn.replay import ReplayBuffer

OBS, ACTIONS = 4, 2


def fill(buffer, n, generator):
    for _ in range(n):
        s = torch.randn(OBS, generator=generator)
        a = int(torch.randint(ACTIONS, (1,), generator=generator))
        r = float(s[a] > 0)
        buffer.push(s, a, r, torch.randn(OBS, generator=generator), False)


def reference_grads(qnet, batch, gamma):
    """Semi-gradient TD: the bootstrapped target is a constant."""
    states, actions, rewards, next_states, dones = batch
    qnet.zero_grad()
    q = qnet(states).gather(1, actions.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        target = rewards + gamma * qnet(next_states).max(1)[0] * (1 - dones)
    F.smooth_l1_loss(q, target).backward()
    return [p.grad.clone() for p in qnet.parameters()]


def main():
    torch.manual_seed(0)
    random.seed(0)
    gen = torch.Generator().manual_seed(0)
    qnet = QNetwork(OBS, ACTIONS)
    learner = Learner(qnet, torch.optim.Adam(qnet.parameters(), lr=1e-3))
    buffer = ReplayBuffer(100)
    fill(buffer, 64, gen)
    for _ in range(3):
        learner.update(buffer.sample(16))
    batch = buffer.sample(16)
    qnet.zero_grad()
    learner.td_loss(batch).backward()
    ours = [p.grad.clone() for p in qnet.parameters()]
    ref = reference_grads(qnet, batch, learner.gamma)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, ref))
    print("MATCH" if ok else "MISMATCH: the TD target is differentiated")


if __name__ == "__main__":
    main()

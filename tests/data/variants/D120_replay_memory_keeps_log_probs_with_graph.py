# source: REINFORCE / DQN-style replay memories that push the log-probability tensor of each action (`self.memory.append((log_prob, reward))`) and sample older entries again after their graph was freed (PyTorch forum "Trying to backward through the graph a second time" with a replay buffer)
# family: D
# expect: error
# line: 20, 33  (backward: 38)
# fix: store what is needed to recompute (state, action, reward) and recompute the log-probability when the transition is sampled
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class Memory:
    def __init__(self):
        self.memory = []

    def push(self, *transition):
        self.memory.append(transition)

    def sample(self, n):
        return random.sample(self.memory, n)


if __name__ == "__main__":
    policy = nn.Linear(4, 2)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    mem = Memory()
    for episode in range(3):
        state = torch.randn(4)
        log_prob = torch.log_softmax(policy(state), -1)[0]
        mem.push(log_prob, 1.0)
        if len(mem.memory) >= 2:
            batch = mem.sample(2)
            loss = -sum(lp * r for lp, r in batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
    print("done")

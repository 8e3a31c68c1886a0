# source: https://github.com/pytorch/examples/issues/151 (reinforce.py adapted to keep its experience and call finish_episode() several times on random samples of it: "Trying to backward through the graph second time")
# family: D
# expect: error
# line: 37, 48  (backward: 51)
# fix: keep (state, action) in the memory and recompute the log-probability with the current policy when a sample is replayed
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
random.seed(0)


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.affine1 = nn.Linear(obs_dim, 32)
        self.affine2 = nn.Linear(32, n_actions)

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=-1)


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.memory = []
        self.rewards = []

    def select_action(self, state):
        dist = Categorical(self.policy(state))
        action = dist.sample()
        self.memory.append((state, action, dist.log_prob(action)))
        return action.item()

    def finish_episode(self, batch_size=12, gamma=0.99):
        returns, running = [], 0.0
        for r in reversed(self.rewards):
            running = r + gamma * running
            returns.insert(0, running)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-6)
        idx = random.sample(range(len(self.memory)), batch_size)
        log_probs = torch.stack([self.memory[i][2] for i in idx])
        loss = -(log_probs * returns[idx]).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    agent = Agent()
    for t in range(16):  # one short episode of a fake environment
        agent.select_action(torch.randn(4))
        agent.rewards.append(float(t % 3 == 0))
    for update in range(3):  # several updates on random samples of the same experience
        print("update", update, "loss", agent.finish_episode())

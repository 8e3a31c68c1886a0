# source: pytorch/examples reinforcement_learning/reinforce.py (finish_episode() backpropagates the episode's saved log-probabilities once, then `del policy.rewards[:]` and `del policy.saved_log_probs[:]`)
# family: G
# expect: ok
# line: 29
# fix: none needed - every stored log-probability is used by exactly one backward and the lists are cleared afterwards
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.affine2 = nn.Linear(32, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=1)


def select_action(policy, state):
    m = Categorical(policy(state.unsqueeze(0)))
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(policy, optimizer, gamma=0.99):
    R, returns = 0.0, []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    policy_loss = torch.cat([-lp * R for lp, R in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


if __name__ == "__main__":
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for episode in range(3):
        for t in range(10):
            select_action(policy, torch.randn(4))
            policy.rewards.append(float(t % 2))
        print("episode", episode, "loss", finish_episode(policy, optimizer))

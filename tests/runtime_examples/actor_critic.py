"""pytorch/examples reinforcement_learning/actor_critic in small, with a fake environment: two
heads, log_prob * advantage with the value detached (.item()), smooth L1 for the critic."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


torch.manual_seed(0)
model = Policy()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
gamma = 0.99
for episode in range(3):
    state = torch.randn(4)
    for t in range(6):
        probs, value = model(state)
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append((m.log_prob(action), value))
        state = torch.randn(4) + action.item()
        model.rewards.append(float(action.item()) - 0.5)
    R, returns = 0, []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    policy_losses, value_losses = [], []
    for (log_prob, value), R in zip(model.saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    print("episode %d loss %.5f" % (episode, loss.item()))

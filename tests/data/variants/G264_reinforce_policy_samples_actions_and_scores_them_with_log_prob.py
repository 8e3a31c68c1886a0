# source: REINFORCE / policy-gradient code (the PyTorch examples' reinforce.py shape) that draws actions with Categorical(...).sample() and backpropagates -log_prob(action) * return: sample() is meant to be non-differentiable here, the score-function gradient flows through log_prob
# family: G
# expect: ok
# line: 26
# fix: none needed: the gradient goes through log_prob, not through the sample
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self, d_obs=4, n_actions=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_obs, 16), nn.Tanh(), nn.Linear(16, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.net(obs))


if __name__ == "__main__":
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    dist = policy(torch.randn(10, 4))
    actions = dist.sample()
    returns = torch.randn(10)
    loss = -(dist.log_prob(actions) * returns).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("MATCH" if policy.net[0].weight.grad is not None else "MISMATCH: no policy gradient")

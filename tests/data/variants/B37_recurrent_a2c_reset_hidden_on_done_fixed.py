# source: recurrent A2C/PPO rollouts resetting the GRU state of finished episodes with `hx[done] = 0` after the policy/value heads consumed hx
# family: B
# expect: ok
# line: 40  (backward: 57)
# fix: (fixed version of B37_recurrent_a2c_reset_hidden_on_done.py) reset out-of-place: hx = hx * (~done).float().unsqueeze(1)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)


class RecurrentActorCritic(nn.Module):
    def __init__(self, obs_dim=6, hidden=16, n_actions=3):
        super().__init__()
        self.enc = nn.Linear(obs_dim, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs, hx):
        hx = self.gru(F.relu(self.enc(obs)), hx)
        return self.pi(hx), self.v(hx).squeeze(-1), hx


def rollout(model, n_envs=4, T=5, hidden=16, gamma=0.99):
    hx = torch.zeros(n_envs, hidden)
    log_probs, values, rewards, masks = [], [], [], []
    for t in range(T):
        obs = torch.randn(n_envs, 6)
        logits, value, hx = model(obs, hx)
        dist = Categorical(logits=logits)
        action = dist.sample()
        done = torch.rand(n_envs) < 0.3
        log_probs.append(dist.log_prob(action))
        values.append(value)
        rewards.append((action == 1).float())
        masks.append((~done).float())
        hx = hx * (~done).float().unsqueeze(1)
    R = torch.zeros(n_envs)
    returns = []
    for r, m in zip(reversed(rewards), reversed(masks)):
        R = r + gamma * R * m
        returns.insert(0, R)
    returns, values, log_probs = torch.stack(returns), torch.stack(values), torch.stack(log_probs)
    adv = returns - values
    return -(log_probs * adv.detach()).mean() + 0.5 * adv.pow(2).mean()


if __name__ == "__main__":
    torch.manual_seed(1)
    model = RecurrentActorCritic()
    opt = torch.optim.RMSprop(model.parameters(), lr=7e-4)
    loss = rollout(model)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

# source: recurrent A2C/PPO agents (GRU policy over vectorised envs) that reset the hidden state on episode end with `hx = hx * masks` and keep it across rollouts; the mask multiplication does not cut the history, so the next update backpropagates into the previous rollout's freed graph
# family: D
# expect: error
# line: 42, 46  (backward: 60)
# fix: cut the history at the start of every rollout: hx = hx.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)

N_ENVS, OBS, ACT, HID = 4, 6, 3, 16


class RecurrentActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(OBS, HID)
        self.pi = nn.Linear(HID, ACT)
        self.v = nn.Linear(HID, 1)

    def forward(self, obs, hx):
        hx = self.gru(obs, hx)
        return self.pi(hx), self.v(hx).squeeze(-1), hx


def env_step(actions):
    rewards = (actions == 1).float() + 0.1 * torch.randn(N_ENVS)
    dones = (torch.rand(N_ENVS) < 0.2).float()
    return torch.randn(N_ENVS, OBS), rewards, dones


if __name__ == "__main__":
    agent = RecurrentActorCritic()
    opt = torch.optim.RMSprop(agent.parameters(), lr=7e-4)
    obs, hx = torch.randn(N_ENVS, OBS), torch.zeros(N_ENVS, HID)
    gamma, n_steps = 0.99, 5
    for update in range(3):
        log_probs, values, rewards, masks = [], [], [], []
        for step in range(n_steps):
            logits, value, hx = agent(obs, hx)
            dist = Categorical(logits=logits)
            action = dist.sample()
            obs, reward, done = env_step(action)
            hx = hx * (1.0 - done).unsqueeze(1)
            log_probs.append(dist.log_prob(action))
            values.append(value)
            rewards.append(reward)
            masks.append(1.0 - done)
        with torch.no_grad():
            R = agent(obs, hx)[1]
        returns = []
        for r, m in zip(reversed(rewards), reversed(masks)):
            R = r + gamma * R * m
            returns.insert(0, R)
        adv = torch.stack(returns) - torch.stack(values)
        loss = -(torch.stack(log_probs) * adv.detach()).mean() + 0.5 * adv.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())

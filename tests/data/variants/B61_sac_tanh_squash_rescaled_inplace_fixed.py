# source: SAC actors (CleanRL sac_continuous_action.py: y_t = torch.tanh(x_t); action = y_t * action_scale + action_bias) rewritten to rescale the squashed action in place; TanhBackward and the pow in the log-prob correction both need y_t
# family: B
# expect: ok
# line: 36  (backward: 53)
# fix: (fixed version of B61_sac_tanh_squash_rescaled_inplace.py) rescale out-of-place: action = y_t * self.action_scale + self.action_bias
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class Actor(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2, low=-2.0, high=2.0):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.fc_mean = nn.Linear(64, act_dim)
        self.fc_logstd = nn.Linear(64, act_dim)
        self.register_buffer("action_scale", torch.full((act_dim,), (high - low) / 2.0))
        self.register_buffer("action_bias", torch.full((act_dim,), (high + low) / 2.0))

    def get_action(self, obs):
        h = self.fc(obs)
        mean = self.fc_mean(h)
        log_std = torch.tanh(self.fc_logstd(h))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        std = log_std.exp()
        x_t = mean + std * torch.randn_like(mean)
        y_t = torch.tanh(x_t)
        log_prob = -0.5 * ((x_t - mean) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)
        log_prob = log_prob - torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        action = y_t * self.action_scale + self.action_bias
        return action, log_prob.sum(1, keepdim=True)


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], 1))


def actor_update(actor, qf, actor_opt, obs, alpha=0.2):
    pi, log_pi = actor.get_action(obs)
    actor_loss = (alpha * log_pi - qf(obs, pi)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    return actor_loss.item()


if __name__ == "__main__":
    actor, qf = Actor(), SoftQNetwork()
    qf.requires_grad_(False)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    for it in range(2):
        print("actor loss", round(actor_update(actor, qf, actor_opt, torch.randn(32, 6)), 4))

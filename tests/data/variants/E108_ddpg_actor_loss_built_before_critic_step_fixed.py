# source: https://github.com/JoshuaWu1997/PyTorch-DDPG-Stock-Trading/issues/2 ("a question in DDPG.train_on_batch": both losses are prepared from the same batch before the updates; the actor loss must be computed separately, after the critic update)
# family: E
# expect: ok
# line: 37, 40  (backward: 42)
# fix: (fixed version of E108_ddpg_actor_loss_built_before_critic_step.py) build the actor loss after the critic's optimizer step (actor_loss = -self.critic(s, self.actor(s)).mean() right before its backward)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, s_dim=5, a_dim=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(s_dim + a_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=1))


class DDPG:
    def __init__(self, s_dim=5, a_dim=2, gamma=0.99, tau=0.01):
        self.actor = nn.Sequential(nn.Linear(s_dim, 32), nn.ReLU(), nn.Linear(32, a_dim), nn.Tanh())
        self.critic = Critic(s_dim, a_dim)
        self.actor_target, self.critic_target = copy.deepcopy(self.actor), copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.gamma, self.tau = gamma, tau

    def train_on_batch(self, s, a, r, s2, done):
        with torch.no_grad():
            y = r + self.gamma * (1 - done) * self.critic_target(s2, self.actor_target(s2))
        critic_loss = F.mse_loss(self.critic(s, a), y)

        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(s, self.actor(s)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        with torch.no_grad():
            for net, target in ((self.actor, self.actor_target), (self.critic, self.critic_target)):
                for p, tp in zip(net.parameters(), target.parameters()):
                    tp.mul_(1 - self.tau).add_(self.tau * p)
        return critic_loss.item(), actor_loss.item()


if __name__ == "__main__":
    agent = DDPG()
    for it in range(2):
        batch = (torch.randn(16, 5), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1), torch.randn(16, 5), torch.zeros(16, 1))
        print("iter", it, agent.train_on_batch(*batch))

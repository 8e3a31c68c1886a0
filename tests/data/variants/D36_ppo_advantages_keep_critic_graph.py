# source: PPO reimplementations that compute advantages = returns - critic(states) with the graph attached and reuse them for K update epochs (second epoch: "Trying to backward through the graph a second time")
# family: D
# expect: error
# line: 22, 23  (backward: 33)
# fix: compute the rollout values without a graph: values = critic(states).squeeze(-1).detach() (or under torch.no_grad())
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class PPO:
    def __init__(self, obs_dim=4, n_actions=2, clip=0.2, epochs=4):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        params = list(self.actor.parameters()) + list(self.critic.parameters())
        self.optimizer = torch.optim.Adam(params, lr=3e-4)
        self.clip, self.epochs = clip, epochs

    def update(self, states, actions, old_logp, returns):
        values = self.critic(states).squeeze(-1)
        advantages = returns - values
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        for _ in range(self.epochs):
            logp = Categorical(logits=self.actor(states)).log_prob(actions)
            ratio = torch.exp(logp - old_logp)
            surr1 = ratio * advantages
            surr2 = torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * advantages
            value_loss = (self.critic(states).squeeze(-1) - returns).pow(2).mean()
            loss = -torch.min(surr1, surr2).mean() + 0.5 * value_loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    agent = PPO()
    states, actions = torch.randn(16, 4), torch.randint(0, 2, (16,))
    with torch.no_grad():
        old_logp = Categorical(logits=agent.actor(states)).log_prob(actions)
    print("loss", agent.update(states, actions, old_logp, torch.randn(16)))

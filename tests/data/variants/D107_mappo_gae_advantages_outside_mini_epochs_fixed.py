# source: https://github.com/hijkzzz/pymarl2/issues/46 ("MAPPO bug, trying to backward through the graph a second time": the advantages are computed outside the mini_epochs loop from critic values that keep their graph, then reused by every mini-batch)
# family: D
# expect: ok
# line: 32  (backward: 44)
# fix: (fixed version of D107_mappo_gae_advantages_outside_mini_epochs.py) compute the rollout values (and so the advantages and returns) without a graph: values = self.critic(batch["obs"]).squeeze(-1).detach()
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class Learner:
    def __init__(self, obs_dim=6, n_actions=3, mini_epochs=4, clip=0.2):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=5e-4)
        self.mini_epochs, self.clip = mini_epochs, clip

    @staticmethod
    def compute_gae(rewards, values, dones, gamma=0.99, lam=0.95):
        advantages = []
        gae = 0.0
        for t in reversed(range(len(rewards))):
            next_value = values[t + 1] if t + 1 < len(rewards) else 0.0
            delta = rewards[t] + gamma * next_value * (1 - dones[t]) - values[t]
            gae = delta + gamma * lam * (1 - dones[t]) * gae
            advantages.insert(0, gae)
        return torch.stack(advantages)

    def train(self, batch):
        values = self.critic(batch["obs"]).squeeze(-1).detach()
        advantages = self.compute_gae(batch["rewards"], values, batch["dones"])
        returns = advantages + values
        for _ in range(self.mini_epochs):
            for idx in torch.randperm(len(advantages)).split(8):
                logp = Categorical(logits=self.actor(batch["obs"][idx])).log_prob(batch["actions"][idx])
                ratio = torch.exp(logp - batch["old_logp"][idx])
                adv = advantages[idx]
                pg_loss = -torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv).mean()
                v_loss = (self.critic(batch["obs"][idx]).squeeze(-1) - returns[idx]).pow(2).mean()
                loss = pg_loss + 0.5 * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    learner = Learner()
    T = 24
    obs = torch.randn(T, 6)
    with torch.no_grad():
        dist = Categorical(logits=learner.actor(obs))
        actions = dist.sample()
        old_logp = dist.log_prob(actions)
    batch = {"obs": obs, "actions": actions, "old_logp": old_logp,
             "rewards": torch.randn(T), "dones": (torch.rand(T) < 0.1).float()}
    print("loss", learner.train(batch))

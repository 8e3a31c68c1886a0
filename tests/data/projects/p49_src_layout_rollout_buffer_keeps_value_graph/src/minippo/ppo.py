import torch

from .buffers import RolloutBuffer
from .policies import ActorCritic


class PPO:
    def __init__(self, obs_dim, n_actions, n_steps=8, n_epochs=3, clip_range=0.2, lr=3e-3):
        self.policy = ActorCritic(obs_dim, n_actions)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.buffer = RolloutBuffer()
        self.obs_dim, self.n_steps, self.n_epochs, self.clip_range = obs_dim, n_steps, n_epochs, clip_range

    def collect_rollout(self):
        self.buffer.reset()
        for _ in range(self.n_steps):
            obs = torch.randn(self.obs_dim)
            dist, value = self.policy(obs)
            action = dist.sample()
            reward = torch.tensor(1.0 if action.item() == 0 else 0.0)
            self.buffer.add(obs, action, reward, value, dist.log_prob(action))

    def train(self):
        buf = self.buffer
        buf.compute_returns_and_advantage()
        obs, actions = torch.stack(buf.obs), torch.stack(buf.actions)
        old_log_probs = torch.stack(buf.log_probs)
        for _ in range(self.n_epochs):
            dist, values = self.policy(obs)
            ratio = torch.exp(dist.log_prob(actions) - old_log_probs)
            adv = buf.advantages
            policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - self.clip_range, 1 + self.clip_range) * adv).mean()
            value_loss = ((buf.returns - values) ** 2).mean()
            loss = policy_loss + 0.5 * value_loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()

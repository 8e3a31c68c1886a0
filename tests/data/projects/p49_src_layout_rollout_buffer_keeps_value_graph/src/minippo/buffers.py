import torch


class RolloutBuffer:
    """Transitions of one rollout, then returns and advantages for the update epochs."""

    def __init__(self, gamma=0.99):
        self.gamma = gamma
        self.reset()

    def reset(self):
        self.obs, self.actions, self.rewards, self.values, self.log_probs = [], [], [], [], []

    def add(self, obs, action, reward, value, log_prob):
        self.obs.append(obs)
        self.actions.append(action)
        self.rewards.append(reward)
        self.values.append(value)
        self.log_probs.append(log_prob.detach())

    def compute_returns_and_advantage(self):
        returns, running = [], torch.zeros(())
        for r in reversed(self.rewards):
            running = r + self.gamma * running
            returns.insert(0, running)
        self.returns = torch.stack(returns)
        self.values_t = torch.stack(self.values)
        self.advantages = self.returns - self.values_t

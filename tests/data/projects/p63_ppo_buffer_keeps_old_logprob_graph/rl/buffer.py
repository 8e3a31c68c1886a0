import torch


class RolloutStorage:
    """On-policy storage of one rollout: observations, actions, old log-probs, returns."""

    def __init__(self):
        self.clear()

    def clear(self):
        self.obs, self.actions, self.logps, self.rewards = [], [], [], []

    def add(self, obs, action, logp, reward):
        self.obs.append(obs)
        self.actions.append(action)
        self.logps.append(logp)
        self.rewards.append(reward)

    def returns(self, gamma):
        ret, out = 0.0, []
        for r in reversed(self.rewards):
            ret = r + gamma * ret
            out.append(ret)
        return torch.tensor(out[::-1])

    def batch(self):
        return torch.stack(self.obs), torch.stack(self.actions), torch.stack(self.logps)

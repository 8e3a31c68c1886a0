import torch


class PPO:
    def __init__(self, policy, lr=3e-3, clip=0.2, epochs=4, gamma=0.99):
        self.policy = policy
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
        self.clip, self.epochs, self.gamma = clip, epochs, gamma

    def update(self, storage):
        obs, actions, old_logps = storage.batch()
        returns = storage.returns(self.gamma)
        adv = (returns - returns.mean()) / (returns.std() + 1e-8)
        for _ in range(self.epochs):
            logps = self.policy.dist(obs).log_prob(actions)
            ratio = torch.exp(logps - old_logps)
            clipped = torch.clamp(ratio, 1 - self.clip, 1 + self.clip)
            loss = -torch.min(ratio * adv, clipped * adv).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()

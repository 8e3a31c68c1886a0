import torch


def discounted_returns(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return torch.tensor(out[::-1])


def collect(agent, steps, obs_dim, generator, gamma=0.99):
    """A toy environment: observations are random, the reward favours action 0."""
    log_probs, values, rewards = [], [], []
    for _ in range(steps):
        obs = torch.randn(obs_dim, generator=generator)
        dist, value = agent(obs)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        values.append(value)
        rewards.append(1.0 if action.item() == 0 else 0.0)
    return torch.stack(log_probs), torch.stack(values), discounted_returns(rewards, gamma)

import torch


def compute_gae(rewards, values, gamma, lam):
    adv = torch.zeros_like(rewards)
    last = 0.0
    values = values.detach()
    for t in reversed(range(len(rewards))):
        next_v = values[t + 1] if t + 1 < len(rewards) else 0.0
        delta = rewards[t] + gamma * next_v - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values

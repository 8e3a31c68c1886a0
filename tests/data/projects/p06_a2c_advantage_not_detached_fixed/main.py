import copy

import torch

from agent import build_agent
from agent.losses import a2c_loss
from agent.optim import make_optimizer
from rollout import collect


def reference_loss(log_probs, values, returns, value_coef=0.5):
    """The A2C loss of the paper: the policy term treats the advantage as a constant."""
    advantages = returns - values
    return -(log_probs * advantages.detach()).mean() + value_coef * advantages.pow(2).mean()


def grads(model, loss_fn, seed):
    model.zero_grad()
    log_probs, values, returns = collect(model, 16, 4, torch.Generator().manual_seed(seed))
    loss_fn(log_probs, values, returns).backward()
    return [p.grad.clone() for p in model.parameters()]


if __name__ == "__main__":
    torch.manual_seed(0)
    agent = build_agent("a2c", obs_dim=4, n_actions=3)
    optimizer = make_optimizer(agent.parameters())
    for update in range(3):
        optimizer.zero_grad()
        log_probs, values, returns = collect(agent, 16, 4, torch.Generator().manual_seed(update))
        a2c_loss(log_probs, values, returns).backward()
        optimizer.step()
    probe = copy.deepcopy(agent)
    torch.manual_seed(123)
    ours = grads(agent, a2c_loss, seed=7)
    torch.manual_seed(123)
    ref = grads(probe, reference_loss, seed=7)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, ref))
    print("MATCH" if ok else "MISMATCH: the policy loss sends gradients into the critic")

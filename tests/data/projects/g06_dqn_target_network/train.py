import torch

from agent import make_agent

CFG = {"obs_dim": 4, "n_actions": 2, "gamma": 0.99, "optimizer": "Adam", "optimizer_kwargs": {"lr": 1e-3}}


def sample_batch(generator, n=16):
    states = torch.randn(n, CFG["obs_dim"], generator=generator)
    actions = torch.randint(0, CFG["n_actions"], (n,), generator=generator)
    rewards = (states[:, 0] > 0).float()
    next_states = states + 0.1 * torch.randn(n, CFG["obs_dim"], generator=generator)
    dones = (torch.rand(n, generator=generator) > 0.9).float()
    return states, actions, rewards, next_states, dones


if __name__ == "__main__":
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    agent = make_agent(CFG)
    for step in range(4):
        print(f"update {step}: loss {agent.learn(sample_batch(gen)):.4f}")

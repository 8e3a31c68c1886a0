import torch

from agents.ppo import PPOAgent

CONFIG = {
    "env": {"obs_dim": 4, "n_actions": 2, "horizon": 8},
    "ppo": {"lr": 3e-4, "gamma": 0.99, "lam": 0.95, "clip": 0.2, "epochs": 2, "vf_coef": 0.5},
}


def rollout(agent, horizon, obs_dim):
    obs = torch.randn(horizon, obs_dim)
    with torch.no_grad():
        dist, values = agent.net(obs)
        actions = dist.sample()
        logp = dist.log_prob(actions)
    rewards = torch.randn(horizon)
    return obs, actions, logp, rewards, values


def main():
    torch.manual_seed(0)
    agent = PPOAgent(CONFIG)
    for it in range(2):
        agent.update(*rollout(agent, CONFIG["env"]["horizon"], CONFIG["env"]["obs_dim"]))
        print("update", it)


if __name__ == "__main__":
    main()

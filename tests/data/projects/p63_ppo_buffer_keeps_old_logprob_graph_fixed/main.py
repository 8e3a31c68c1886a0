"""PPO on a toy bandit-like environment (reduced from a CartPole script)."""
import torch

from rl.buffer import RolloutStorage
from rl.policy import MLPPolicy
from rl.ppo import PPO

CONFIG = {"rollout_len": 16, "updates": 2, "lr": 3e-3, "ppo_epochs": 4}


def env_step(obs, action):
    reward = float(action.item() == int(obs[0] > 0))
    return torch.randn(4), reward


def main(cfg):
    torch.manual_seed(0)
    policy = MLPPolicy()
    agent = PPO(policy, lr=cfg["lr"], epochs=cfg["ppo_epochs"])
    storage = RolloutStorage()
    obs = torch.randn(4)
    for update in range(cfg["updates"]):
        storage.clear()
        for _ in range(cfg["rollout_len"]):
            action, logp = policy.act(obs)
            next_obs, reward = env_step(obs, action)
            storage.add(obs, action, logp, reward)
            obs = next_obs
        print(update, agent.update(storage))


if __name__ == "__main__":
    main(CONFIG)

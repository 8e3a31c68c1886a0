import json
import random

import torch

from agents import AGENTS


def main():
    with open("configs/dqn.json") as f:
        config = json.load(f)
    random.seed(0)
    torch.manual_seed(0)
    agent = AGENTS["dqn"](config)
    obs = torch.randn(config["obs_dim"])
    z, action = agent.act(obs)
    for step in range(config["n_steps"]):
        next_obs = torch.randn(config["obs_dim"])
        next_z, next_action = agent.act(next_obs)
        agent.remember(z, action, next_z, float(-obs.abs().sum()))
        if len(agent.memory) >= 2:
            print("step", step, "loss", agent.learn())
        z, action = next_z, next_action
        obs = next_obs


if __name__ == "__main__":
    main()

"""Run from the repository root: python scripts/train.py (no install needed)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import torch  # noqa: E402

from minippo.ppo import PPO  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--n-epochs", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    agent = PPO(obs_dim=4, n_actions=2, n_epochs=args.n_epochs)
    for it in range(args.iterations):
        agent.collect_rollout()
        print("iteration", it, "loss", agent.train())


if __name__ == "__main__":
    main()

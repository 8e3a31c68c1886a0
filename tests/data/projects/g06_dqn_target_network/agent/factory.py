import torch

from .dqn import DQNAgent
from .networks import q_network


def make_agent(cfg):
    net = q_network(cfg["obs_dim"], cfg["n_actions"])
    optimizer = getattr(torch.optim, cfg["optimizer"])(net.parameters(), **cfg["optimizer_kwargs"])
    return DQNAgent(net, optimizer, gamma=cfg["gamma"])

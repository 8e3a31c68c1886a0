import torch.nn as nn


def q_network(obs_dim, n_actions, hidden=32):
    return nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, n_actions))

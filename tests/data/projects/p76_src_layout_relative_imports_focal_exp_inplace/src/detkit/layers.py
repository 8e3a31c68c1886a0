import torch.nn as nn


def mlp(c_in, c_out):
    return nn.Sequential(nn.Linear(c_in, c_out), nn.ReLU(), nn.Linear(c_out, c_out))

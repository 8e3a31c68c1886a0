import torch.nn as nn


def create_model(name, num_classes):
    if name != "mlp_mixer_tiny":
        raise KeyError(name)
    return nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 16), nn.GELU(), nn.Linear(16, num_classes))

import torch.nn as nn


def mlp_encoder(num_classes, in_dim=12):
    return nn.Sequential(nn.Linear(in_dim, 32), nn.BatchNorm1d(32), nn.ReLU(inplace=True), nn.Linear(32, num_classes))


ENCODERS = {"mlp": mlp_encoder}

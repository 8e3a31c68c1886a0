import torch.nn as nn


def make_layers(cfg, in_channels=3):
    layers = []
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        elif v == "T":
            layers += [nn.Tanh()]
        elif v == "C":
            layers += [nn.Hardtanh(-0.5, 0.5)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)

import functools

import torch.nn as nn


def get_norm_layer(norm_type="instance"):
    if norm_type == "batch":
        return functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    return functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)


def define_G(ch, norm="instance"):
    norm_layer = get_norm_layer(norm)
    return nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), norm_layer(ch), nn.ReLU(True), nn.Conv2d(ch, 3, 3, padding=1),
                         nn.Tanh())


def define_D(ch):
    return nn.Sequential(nn.Conv2d(3, ch, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(ch, 1, 3, padding=1))


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = prediction.new_ones(prediction.shape) if target_is_real else prediction.new_zeros(prediction.shape)
        return self.loss(prediction, target)

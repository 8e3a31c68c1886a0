import torch.nn as nn


class Dense(nn.Linear):
    def __init__(self, dim=6):
        super().__init__(dim, dim)

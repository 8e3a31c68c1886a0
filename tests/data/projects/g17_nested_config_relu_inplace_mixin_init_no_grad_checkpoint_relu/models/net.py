import torch
import torch.nn as nn

from models.blocks import Block
from models.mixins import InitWeightsMixin
from utils.checkpointing import CheckpointWrapper


class Net(InitWeightsMixin, nn.Module):
    def __init__(self, model_cfg, in_dim=8, num_classes=3):
        super().__init__()
        dims = [in_dim] + list(model_cfg["channels"])
        self.body = nn.Sequential(*[
            CheckpointWrapper(Block(dims[i], dims[i + 1], model_cfg["act"], model_cfg["act_kwargs"]),
                              enabled=model_cfg["ckpt"])
            for i in range(len(dims) - 1)
        ])
        self.head = nn.Linear(dims[-1], num_classes)
        self.init_weights()

    def forward(self, x):
        probs = torch.exp(self.head(self.body(x)).log_softmax(-1))
        return probs.clamp(min=1e-6)

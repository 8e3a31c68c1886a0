import torch.nn as nn

from models.blocks import GatedBlock


def build_model(model_cfg, in_dim=8, num_classes=3):
    dims = [in_dim] + list(model_cfg["channels"])
    body = nn.Sequential(*[
        GatedBlock(dims[i], dims[i + 1], act=model_cfg["act"],
                   act_kwargs=model_cfg["act_kwargs"], gate=model_cfg["gate"])
        for i in range(len(dims) - 1)
    ])
    return nn.Sequential(body, nn.Linear(dims[-1], num_classes))

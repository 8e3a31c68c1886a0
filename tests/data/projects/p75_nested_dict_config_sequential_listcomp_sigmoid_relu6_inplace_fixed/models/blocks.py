import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, c_in, c_out, act="ReLU", act_kwargs=None, gate=False):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)
        layers = [nn.Sigmoid()] if gate else []
        layers.append(getattr(nn, act)(**(act_kwargs or {})))
        self.post = nn.Sequential(*layers)

    def forward(self, x):
        return self.post(self.fc(x))

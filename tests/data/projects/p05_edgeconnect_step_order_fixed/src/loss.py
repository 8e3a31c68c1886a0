import torch
import torch.nn as nn


class AdversarialLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.BCELoss()

    def forward(self, outputs, is_real):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)

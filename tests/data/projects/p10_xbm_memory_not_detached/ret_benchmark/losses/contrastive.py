import torch
import torch.nn as nn


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=0.5):
        super().__init__()
        self.margin = margin

    def forward(self, inputs_col, targets_col, inputs_row, targets_row):
        sim = inputs_col @ inputs_row.t()
        pos = targets_col.unsqueeze(1) == targets_row.unsqueeze(0)
        pos_loss = (1 - sim)[pos].sum()
        neg = torch.relu(sim - self.margin)[~pos]
        return (pos_loss + neg.sum()) / inputs_col.size(0)

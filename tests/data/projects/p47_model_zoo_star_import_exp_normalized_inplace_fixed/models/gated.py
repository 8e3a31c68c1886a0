import torch
import torch.nn as nn

__all__ = ["GatedMixture", "gated_mixture_small"]


class GatedMixture(nn.Module):
    """Mixture of linear experts; the gate is a softmax written out by hand."""

    def __init__(self, in_dim, num_classes, num_experts=4):
        super().__init__()
        self.gate = nn.Linear(in_dim, num_experts)
        self.experts = nn.ModuleList(nn.Linear(in_dim, num_classes) for _ in range(num_experts))

    def forward(self, x):
        weights = torch.exp(self.gate(x))
        weights = weights / weights.sum(dim=1, keepdim=True)
        outs = torch.stack([e(x) for e in self.experts], dim=1)
        return (weights.unsqueeze(-1) * outs).sum(dim=1)


def gated_mixture_small(in_dim=8, num_classes=3):
    return GatedMixture(in_dim, num_classes, num_experts=4)

import torch.nn as nn

from debias.heads import adversary_head, task_head
from debias.layers import reverse


class FairClassifier(nn.Module):
    """Encoder + task head, with an adversary that tries to recover the protected attribute
    through a gradient reversal layer (adversarial debiasing)."""

    def __init__(self, in_dim, dim, n_out, n_groups, lambda_=0.5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.adversary = adversary_head(dim, n_groups)
        self.task = task_head(dim, n_out)
        self.lambda_ = lambda_

    def forward(self, x):
        z = self.encoder(x)
        group_logits = self.adversary(reverse(z, self.lambda_))
        return self.task(z), group_logits

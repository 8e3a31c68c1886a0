import torch.nn as nn
import torch.nn.functional as F


class HintKDLoss(nn.Module):
    """FitNets hint + Hinton KD: the regressor that maps student features is trained too."""

    def __init__(self, teacher, s_dim=16, t_dim=48, T=4.0, alpha=0.9, beta=1.0):
        super().__init__()
        self.teacher = teacher
        self.regressor = nn.Linear(s_dim, t_dim)
        self.T, self.alpha, self.beta = T, alpha, beta

    def forward(self, x, s_feat, s_logits, targets):
        t_feat, t_logits = (t.detach() for t in self.teacher(x))
        kd = F.kl_div(F.log_softmax(s_logits / self.T, dim=1), F.softmax(t_logits / self.T, dim=1), reduction="batchmean")
        hint = F.mse_loss(self.regressor(s_feat), t_feat)
        ce = F.cross_entropy(s_logits, targets)
        return self.alpha * kd * self.T**2 + (1 - self.alpha) * ce + self.beta * hint

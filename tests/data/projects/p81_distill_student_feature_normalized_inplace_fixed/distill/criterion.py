import torch.nn as nn
import torch.nn.functional as F


class DistillKL(nn.Module):
    def __init__(self, T=4.0):
        super().__init__()
        self.T = T

    def forward(self, y_s, y_t):
        p_s = F.log_softmax(y_s / self.T, dim=1)
        p_t = F.softmax(y_t / self.T, dim=1)
        return F.kl_div(p_s, p_t, reduction="batchmean") * self.T ** 2


class FeatureCosine(nn.Module):
    def forward(self, f_s, f_t):
        f_s = f_s / (f_s.norm(dim=1, keepdim=True) + 1e-6)
        f_t = F.normalize(f_t, dim=1)
        return (1 - (f_s * f_t).sum(1)).mean()

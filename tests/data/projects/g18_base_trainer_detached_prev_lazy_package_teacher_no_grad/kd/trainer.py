import torch
import torch.nn.functional as F

from engine.base_trainer import BaseTrainer


class KDTrainer(BaseTrainer):
    def __init__(self, model, teacher, optimizer):
        super().__init__(model, optimizer)
        self.teacher = teacher.eval()
        self.prev_feat = None

    def compute_loss(self, batch):
        x, y = batch
        feat_s, logit_s = self.model(x)
        with torch.no_grad():
            feat_t, logit_t = self.teacher(x)
            feat_t /= feat_t.norm(dim=1, keepdim=True) + 1e-6
        f_s = F.normalize(feat_s, dim=1)
        loss = F.cross_entropy(logit_s, y) + (1 - (f_s * feat_t).sum(1)).mean()
        if self.prev_feat is not None:
            loss = loss + 0.1 * F.mse_loss(feat_s.mean(0), self.prev_feat.mean(0))
        self.prev_feat = feat_s.detach()
        return loss

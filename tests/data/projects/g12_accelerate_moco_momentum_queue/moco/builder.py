import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    """MoCo v1/v2: a momentum key encoder and a FIFO queue of its keys."""

    def __init__(self, encoder, dim=8, K=32, m=0.99, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = encoder
        self.encoder_k = copy.deepcopy(encoder)
        for param_k in self.encoder_k.parameters():
            param_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.mul_(self.m).add_(param_q.data, alpha=1.0 - self.m)

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        self.queue = torch.cat([k, self.queue], dim=0)[: self.K]
        return logits, torch.zeros(logits.shape[0], dtype=torch.long)

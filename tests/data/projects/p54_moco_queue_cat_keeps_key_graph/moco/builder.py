import torch
import torch.nn as nn
import torch.nn.functional as F


class QueueContrast(nn.Module):
    """InfoNCE against a FIFO queue of past keys (shared encoder, no momentum branch)."""

    def __init__(self, encoder, dim=8, K=32, T=0.2):
        super().__init__()
        self.encoder = encoder
        self.K = K
        self.T = T
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder(im_q), dim=1)
        k = F.normalize(self.encoder(im_k), dim=1)
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        # dequeue and enqueue
        self.queue = torch.cat([k, self.queue], dim=0)[: self.K]
        return logits, labels

# source: facebookresearch/moco builder.py: keys come from the momentum encoder under torch.no_grad(), _dequeue_and_enqueue is decorated with @torch.no_grad(), and the negatives use self.queue.clone().detach()
# family: G
# expect: ok
# line: 34
# fix: none needed - the queue never holds a graph, and the logits read a detached copy of it
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoCo(nn.Module):
    def __init__(self, dim=16, K=64, m=0.99, T=0.2):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.K, self.m, self.T = K, m, T
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
        self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        self._dequeue_and_enqueue(k)
        return logits, torch.zeros(logits.shape[0], dtype=torch.long)


if __name__ == "__main__":
    model = MoCo()
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.03, momentum=0.9)
    for it in range(3):
        x = torch.randn(16, 20)
        logits, labels = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("iter", it, "loss", loss.item())

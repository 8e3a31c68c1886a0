# source: MoCo re-implementations (facebookresearch/moco builder.py: _dequeue_and_enqueue is decorated with @torch.no_grad()) that use the query encoder for the keys (momentum-0 / symmetric-loss ablation) and dropped the decorator: the queue buffer becomes part of the graph and the next iteration's l_neg backpropagates into the previous iteration's freed encoder graph
# family: D
# expect: error
# line: 23  (backward: 45)
# fix: write the keys into the queue without a graph (keys.detach(), or decorate the enqueue with @torch.no_grad() as the official code does)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoCoSymmetric(nn.Module):
    def __init__(self, in_dim=20, dim=16, K=64, T=0.2):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, dim))
        self.K, self.T = K, T
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    def _dequeue_and_enqueue(self, keys):
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + keys.shape[0]] = keys.T
        self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

    def contrast(self, q, k):
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        return F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long))

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder(im_q), dim=1)
        k = F.normalize(self.encoder(im_k), dim=1)
        return self.contrast(q, k) + self.contrast(k, q), k


if __name__ == "__main__":
    model = MoCoSymmetric()
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    for it in range(3):
        x = torch.randn(16, 20)
        loss, keys = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
        model._dequeue_and_enqueue(keys)
        print("iter", it, "loss", loss.item())

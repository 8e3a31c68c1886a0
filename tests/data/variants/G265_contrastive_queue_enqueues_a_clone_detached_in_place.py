# source: memory-queue contrastive learning code that snapshots the batch's embeddings for the queue with clone() and detaches the snapshot in place (detach_() on the copy), while the loss keeps the live embeddings
# family: G
# expect: ok
# line: 32
# fix: none needed: detach_() cuts only the clone
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QueueContrast(nn.Module):
    def __init__(self, d_in=10, d=6, k=16):
        super().__init__()
        self.encoder = nn.Linear(d_in, d)
        self.register_buffer("queue", F.normalize(torch.randn(k, d), dim=-1))

    def forward(self, x1, x2):
        z1 = F.normalize(self.encoder(x1), dim=-1)
        z2 = F.normalize(self.encoder(x2), dim=-1)
        pos = (z1 * z2).sum(-1, keepdim=True)
        neg = z1 @ self.queue.T
        logits = torch.cat([pos, neg], dim=1) / 0.1
        return F.cross_entropy(logits, torch.zeros(len(x1), dtype=torch.long)), z2


if __name__ == "__main__":
    model = QueueContrast()
    loss, z2 = model(torch.randn(4, 10), torch.randn(4, 10))
    snapshot = z2.clone()
    snapshot.detach_()
    model.queue = torch.cat([snapshot, model.queue])[:16]
    loss.backward()
    print("MATCH" if model.encoder.weight.grad is not None else "MISMATCH: the encoder got no gradient")

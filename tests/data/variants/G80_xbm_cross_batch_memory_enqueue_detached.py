# source: cross-batch memory (XBM) for metric learning: embeddings from past iterations are kept in a FIFO bank and used as extra negatives in the next iteration's contrastive loss; the bank is refilled with torch.cat([emb.detach(), bank]) so it never carries an old graph
# family: G
# expect: ok
# line: 20
# fix: none needed - the tensor carried across iterations is detached before it is stored, so the next backward never reaches a freed graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CrossBatchMemory:
    def __init__(self, size, dim):
        self.size = size
        self.feats = torch.zeros(0, dim)
        self.labels = torch.zeros(0, dtype=torch.long)

    def enqueue(self, feats, labels):
        self.feats = torch.cat([feats.detach(), self.feats])[: self.size]
        self.labels = torch.cat([labels, self.labels])[: self.size]


def contrastive_loss(emb, labels, ref, ref_labels, margin=0.5):
    sim = emb @ ref.t()
    pos = (labels.unsqueeze(1) == ref_labels.unsqueeze(0)).float()
    return ((1 - sim) * pos).sum() / pos.sum().clamp_min(1) + (F.relu(sim - margin) * (1 - pos)).mean()


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    memory = CrossBatchMemory(size=48, dim=8)
    for it in range(4):
        x, y = torch.randn(16, 10), torch.randint(0, 4, (16,))
        emb = F.normalize(encoder(x), dim=1)
        loss = contrastive_loss(emb, y, emb, y)
        if memory.feats.size(0) > 0:
            loss = loss + contrastive_loss(emb, y, memory.feats, memory.labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        memory.enqueue(emb, y)
    print("loss", loss.item())

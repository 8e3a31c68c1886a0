# source: cross-batch memory (XBM, MalongTech/research-xbm) re-implementations that keep the newest embeddings first and make room by shifting the bank with overlapping slices (feats[n:] = feats[:-n]) instead of a ring pointer: "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location"
# family: C
# expect: error
# line: 20
# fix: copy the source before the overlapping shift: self.feats[n:] = self.feats[:-n].clone() (or use torch.cat / a ring pointer)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class XBM:
    def __init__(self, size, dim):
        self.feats = torch.zeros(size, dim)
        self.labels = torch.full((size,), -1, dtype=torch.long)

    def enqueue_dequeue(self, feats, labels):
        n = feats.shape[0]
        self.feats[n:] = self.feats[:-n]
        self.labels[n:] = self.labels[:-n].clone()
        self.feats[:n] = feats.detach()
        self.labels[:n] = labels

    def get(self):
        valid = self.labels >= 0
        return self.feats[valid], self.labels[valid]


def contrastive_loss(emb, labels, ref, ref_labels, margin=0.5):
    sim = emb @ ref.t()
    pos = (labels[:, None] == ref_labels[None, :]).float()
    return ((1 - sim) * pos).sum() / pos.sum().clamp_min(1) + (F.relu(sim - margin) * (1 - pos)).mean()


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    xbm = XBM(size=40, dim=8)
    for it in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
        emb = F.normalize(encoder(x), dim=1)
        loss = contrastive_loss(emb, y, emb, y)
        mem_feats, mem_labels = xbm.get()
        if len(mem_labels):
            loss = loss + contrastive_loss(emb, y, mem_feats, mem_labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xbm.enqueue_dequeue(emb, y)
        print("iter", it, "loss", loss.item())

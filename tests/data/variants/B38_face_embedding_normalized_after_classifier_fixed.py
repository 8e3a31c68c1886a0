# source: face-recognition / re-ID heads that return logits and an L2-normalised embedding, normalising the embedding in place after the classifier used it
# family: B
# expect: ok
# line: 23  (backward: 40)
# fix: (fixed version of B38_face_embedding_normalized_after_classifier.py) emb = F.normalize(emb, dim=1) (out-of-place); the classifier's Linear saved emb for its weight gradient
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ReIDHead(nn.Module):
    def __init__(self, d_in=32, d_emb=16, n_ids=10):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU())
        self.neck = nn.Sequential(nn.Linear(32, d_emb), nn.BatchNorm1d(d_emb))
        self.classifier = nn.Linear(d_emb, n_ids, bias=False)

    def forward(self, x):
        emb = self.neck(self.backbone(x))
        logits = self.classifier(emb)
        emb = F.normalize(emb, dim=1)
        return logits, emb


def triplet_loss(emb, labels, margin=0.3):
    d = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (d * same.float()).max(1).values
    hardest_neg = (d + 1e3 * same.float()).min(1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


if __name__ == "__main__":
    head = ReIDHead()
    x, ids = torch.randn(8, 32), torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    logits, emb = head(x)
    loss = F.cross_entropy(logits, ids) + triplet_loss(emb, ids)
    loss.backward()
    print("loss", loss.item())

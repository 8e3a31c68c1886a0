# source: dual-encoder retrieval training loops that also refresh an ANN index from the in-batch document vectors (forum threads "document tower does not learn"): detach_() meant to hand the index a copy detaches the very tensor the contrastive loss uses, so the document tower gets no gradient
# family: H
# expect: silent
# verify: the document tower's gradient is checked after the backward
# line: 33
# fix: give the index a detached copy: index.append(docs.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DualEncoder(nn.Module):
    def __init__(self, d_q=10, d_d=14, d=8):
        super().__init__()
        self.query_tower = nn.Linear(d_q, d)
        self.doc_tower = nn.Linear(d_d, d)

    def encode_docs(self, d):
        return F.normalize(self.doc_tower(d), dim=-1)

    def encode_queries(self, q):
        return F.normalize(self.query_tower(q), dim=-1)


if __name__ == "__main__":
    model = DualEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    index = []
    q, d = torch.randn(6, 10), torch.randn(6, 14)
    docs = model.encode_docs(d)
    index.append(docs.detach_())
    scores = model.encode_queries(q) @ docs.T / 0.05
    loss = F.cross_entropy(scores, torch.arange(6))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("MISMATCH: the document tower got no gradient" if model.doc_tower.weight.grad is None else "MATCH")

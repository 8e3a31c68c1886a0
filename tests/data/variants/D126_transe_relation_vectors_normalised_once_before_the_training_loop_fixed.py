# source: TransE / knowledge-graph embedding training loops that normalise the relation table once before the loop for speed (forum threads "Trying to backward through the graph a second time" in KGE code): the normalised table keeps the graph of F.normalize over the learnable weight, and every step's margin loss backwards through it again
# family: D
# expect: ok
# line: 26  (backward: 33)
# fix: (fixed version of D126_transe_relation_vectors_normalised_once_before_the_training_loop.py) normalise inside the loop: rel_table = F.normalize(model.rel.weight, dim=1) at the start of each step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransE(nn.Module):
    def __init__(self, n_ent=20, n_rel=4, d=8):
        super().__init__()
        self.ent = nn.Embedding(n_ent, d)
        self.rel = nn.Embedding(n_rel, d)

    def distance(self, h, r, t, rel_table):
        return (self.ent(h) + rel_table[r] - self.ent(t)).norm(p=1, dim=-1)


if __name__ == "__main__":
    model = TransE()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(3):
        rel_table = F.normalize(model.rel.weight, dim=1)
        h, r, t = torch.randint(0, 20, (16,)), torch.randint(0, 4, (16,)), torch.randint(0, 20, (16,))
        t_neg = torch.randint(0, 20, (16,))
        pos, neg = model.distance(h, r, t, rel_table), model.distance(h, r, t_neg, rel_table)
        loss = F.relu(1.0 + pos - neg).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())

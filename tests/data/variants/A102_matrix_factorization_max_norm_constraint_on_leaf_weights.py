# source: matrix-factorization recommenders with a max-norm constraint on the embedding rows applied after each step (forum threads "a leaf Variable that requires grad is being used in an in-place operation" from renorm written by hand): the rows are rescaled in place with div_ outside torch.no_grad()
# family: A
# expect: error
# line: 25
# fix: rescale under torch.no_grad(): with torch.no_grad(): emb.weight.div_(...)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MatrixFactorization(nn.Module):
    def __init__(self, n_users=30, n_items=40, dim=8):
        super().__init__()
        self.users = nn.Embedding(n_users, dim)
        self.items = nn.Embedding(n_items, dim)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)


def apply_max_norm(emb, max_norm=1.0):
    norms = emb.weight.norm(dim=1, keepdim=True)
    emb.weight.div_(norms.clamp(min=max_norm) / max_norm)


if __name__ == "__main__":
    model = MatrixFactorization()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        u, i, r = torch.randint(0, 30, (16,)), torch.randint(0, 40, (16,)), torch.rand(16) * 5
        loss = F.mse_loss(model(u, i), r)
        opt.zero_grad()
        loss.backward()
        opt.step()
        apply_max_norm(model.users)
        apply_max_norm(model.items)
        print("step", step, "loss %.4f" % loss.item())

# source: soft orthogonality regularisers that log the penalty with float() while the tensor itself is added to the loss (the usual form of the regulariser in training scripts)
# family: G
# expect: ok
# line: 38
# fix: none needed: float() is used only for the log line; the loss keeps the tensor penalty
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class OrthoEncoder(nn.Module):
    def __init__(self, d=8, k=4, n_cls=3):
        super().__init__()
        self.basis = nn.Linear(d, k, bias=False)
        self.head = nn.Linear(k, n_cls)

    def forward(self, x):
        return self.head(torch.relu(self.basis(x)))


def orthogonality_penalty(weight):
    gram = weight @ weight.t()
    return (gram - torch.eye(gram.shape[0])).pow(2).sum()


if __name__ == "__main__":
    model = OrthoEncoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    for step in range(3):
        penalty = orthogonality_penalty(model.basis.weight)
        loss = F.cross_entropy(model(x), y) + 0.1 * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d penalty %.5f" % (step, float(penalty)))
    task_only = torch.autograd.grad(F.cross_entropy(model(x), y), model.basis.weight)[0]
    full = torch.autograd.grad(F.cross_entropy(model(x), y) + 0.1 * orthogonality_penalty(model.basis.weight), model.basis.weight)[0]
    print("MISMATCH: the penalty adds no gradient" if torch.allclose(full, task_only) else "MATCH")

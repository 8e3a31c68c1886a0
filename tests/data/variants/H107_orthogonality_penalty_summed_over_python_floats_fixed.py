# source: soft orthogonality regularisers on a projection (forum threads "my orthogonal regularization has no effect on the weights"): the penalty is a Python sum over float() of every entry of W W^T - I, so it is a constant added to the loss
# family: H
# expect: ok
# verify: the basis weight's gradient is compared with the gradient of the task loss alone
# line: 27  (backward: 35)
# fix: (fixed version of H107_orthogonality_penalty_summed_over_python_floats.py) keep the penalty a tensor: return (off ** 2).sum()
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
    off = gram - torch.eye(gram.shape[0])
    return (off ** 2).sum()


if __name__ == "__main__":
    model = OrthoEncoder()
    x = torch.randn(16, 8)
    y = torch.randint(0, 3, (16,))
    loss = F.cross_entropy(model(x), y) + 0.1 * orthogonality_penalty(model.basis.weight)
    loss.backward()
    task_only = torch.autograd.grad(F.cross_entropy(model(x), y), model.basis.weight)[0]
    same = torch.allclose(model.basis.weight.grad, task_only)
    print("loss %.4f" % float(loss))
    print("MISMATCH: the penalty adds no gradient" if same else "MATCH")

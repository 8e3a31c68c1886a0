# source: hand-written magnitude pruning between training steps (a helper that finds the k-th smallest |w| and sets w[w.abs() < thresh] = 0 on model weights; forum threads "a leaf Variable that requires grad is being used in an in-place operation" when pruning): the boolean-index write is an in-place op on a leaf Parameter outside no_grad
# family: A
# expect: ok
# line: 16
# fix: (fixed version of A106_magnitude_pruning_helper_zeroes_weights_by_boolean_index_outside_no_grad.py) write under no_grad (decorate the helper with @torch.no_grad()) or through w.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def prune_smallest_(w, amount=0.3):
    k = max(1, int(amount * w.numel()))
    thresh = w.abs().flatten().kthvalue(k).values
    w.detach()[w.detach().abs() <= thresh] = 0.0


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 2)
    for step in range(2):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        prune_smallest_(model[0].weight)
    print("zeros", int((model[0].weight == 0).sum()))

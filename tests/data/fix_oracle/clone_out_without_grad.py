# fix-kind: clone
# why: a Newton-Schulz iteration written with `out=` on tensors that need no grad (an
#      optimizer's step): nothing is saved, the in-place writes are right; a clone must keep the
#      values, a copy that other names no longer see would change them.
import torch

torch.manual_seed(0)


def orthogonalize(G, steps=3):
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G / (G.norm() + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = torch.baddbmm(A, A, A, beta=b, alpha=c, out=A)
        X = torch.baddbmm(X, B, X, beta=a, out=X)
    return X


G = torch.randn(2, 4, 4)
print(" ".join(f"{v:.5f}" for v in orthogonalize(G).flatten()[:8].tolist()))

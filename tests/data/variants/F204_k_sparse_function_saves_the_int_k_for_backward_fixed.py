# source: k-sparse autoencoders (Makhzani & Frey; top-k activation written as a custom autograd.Function) and the common error 'save_for_backward can only save variables, but argument 1 is of type int': the Function passes the Python int k to ctx.save_for_backward along with the indices
# family: F
# expect: ok
# line: 17  (backward: 34)
# fix: (fixed version of F204_k_sparse_function_saves_the_int_k_for_backward.py) save only tensors and keep k on ctx: ctx.save_for_backward(idx); ctx.k = k
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class KSparse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        values, idx = x.topk(k, dim=-1)
        ctx.save_for_backward(idx)
        return torch.zeros_like(x).scatter(-1, idx, values)

    @staticmethod
    def backward(ctx, grad_out):
        idx = ctx.saved_tensors[0]
        return torch.zeros_like(grad_out).scatter(-1, idx, grad_out.gather(-1, idx)), None


class KSparseAutoencoder(nn.Module):
    def __init__(self, d_in=32, d_hidden=64, k=8):
        super().__init__()
        self.k = k
        self.enc = nn.Linear(d_in, d_hidden)
        self.dec = nn.Linear(d_hidden, d_in)

    def forward(self, x):
        return self.dec(KSparse.apply(self.enc(x), self.k))


if __name__ == "__main__":
    model = KSparseAutoencoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 32)
    loss = F.mse_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss %.4f" % loss.item())

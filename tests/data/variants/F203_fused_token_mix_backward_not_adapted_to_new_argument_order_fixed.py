# source: https://github.com/huggingface/transformers/pull/23774 ("Fix RWKV backward on GPU": "The function backward was not adapted to the revamp of the forward" - the custom WKV Function's forward(ctx, time_decay, time_first, key, value, ...) changed its arguments and the tuple returned by backward no longer lined up with them); here the two per-channel parameters have the same shape, so the swapped gradients pass every shape check
# family: F
# expect: ok
# verify: the gradients of time_decay and time_first are compared with autograd's gradients of the same mixing written with tensor ops
# line: 31  (backward: 55)
# fix: (fixed version of F203_fused_token_mix_backward_not_adapted_to_new_argument_order.py) return the gradients in the order of forward's arguments: return g_time_decay, g_time_first, g_key, g_value
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TokenMixFunction(torch.autograd.Function):
    """out = sigmoid(time_first) * key + exp(-exp(time_decay)) * value, fused with a hand-written backward."""

    @staticmethod
    def forward(ctx, time_decay, time_first, key, value):
        gate = torch.sigmoid(time_first)
        decay = torch.exp(-torch.exp(time_decay))
        ctx.save_for_backward(time_decay, gate, decay, key, value)
        return gate * key + decay * value

    @staticmethod
    def backward(ctx, g):
        time_decay, gate, decay, key, value = ctx.saved_tensors
        g_key = g * gate
        g_value = g * decay
        g_time_first = (g * key * gate * (1 - gate)).sum(dim=(0, 1))
        g_time_decay = (g * value * decay * -torch.exp(time_decay)).sum(dim=(0, 1))
        return g_time_decay, g_time_first, g_key, g_value


class TimeMixBlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.time_decay = nn.Parameter(torch.randn(dim) * 0.5)
        self.time_first = nn.Parameter(torch.randn(dim) * 0.5)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        mixed = TokenMixFunction.apply(self.time_decay, self.time_first, self.key(x), self.value(x))
        return x + self.out(mixed)


if __name__ == "__main__":
    block = TimeMixBlock()
    opt = torch.optim.Adam(block.parameters(), lr=1e-3)
    for step in range(3):
        x, target = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
        loss = F.mse_loss(block(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    x, target = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    watched = [block.time_decay, block.time_first]
    got = torch.autograd.grad(F.mse_loss(block(x), target), watched)
    k, v = block.key(x), block.value(x)
    mixed = torch.sigmoid(block.time_first) * k + torch.exp(-torch.exp(block.time_decay)) * v
    ref = torch.autograd.grad(F.mse_loss(x + block.out(mixed), target), watched)
    if all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: time_decay and time_first receive each other's gradient; max difference",
              max((a - b).abs().max().item() for a, b in zip(got, ref)))

# source: https://github.com/pytorch/pytorch/issues/15131 ("Incorrect NaN gradient from distribution.Normal.log_prob when using subset": the loss is taken on log_prob[:-1], a subset without the nan, and k.grad is still nan) and https://github.com/pytorch/pytorch/issues/4132; here a pointer network's masked softmax gives padded positions probability exactly 0, the per-position -log p is infinite there, and the mask is applied after the log
# family: H
# expect: ok
# verify: the pointer's gradient is compared with autograd's gradient of the same loss with the mask applied before the log
# line: 28  (backward: 48)
# fix: (fixed version of H57_pointer_nll_masked_after_log_of_zero_probability.py) select (or clamp) before the log: nll = -torch.log(probs[valid].clamp_min(1e-12)), or use log_softmax on the masked scores
import torch
import torch.nn as nn

torch.manual_seed(0)


class PointerHead(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)

    def forward(self, dec, enc, pad):
        scores = torch.einsum("bd,bnd->bn", self.query(dec), self.key(enc))
        scores = scores.masked_fill(pad, float("-inf"))
        return torch.softmax(scores, dim=-1)


def pointer_loss(head, dec, enc, pad, target):
    probs = head(dec, enc, pad)
    onehot = torch.zeros_like(probs).scatter_(1, target[:, None], 1.0)
    nll = -(onehot * torch.log(probs.clamp_min(1e-12)))
    valid = ~pad
    return nll[valid].sum() / dec.size(0)


def make_batch(b=4, n=6, dim=8):
    enc = torch.randn(b, n, dim)
    lengths = torch.tensor([6, 4, 5, 3])
    pad = torch.arange(n)[None, :] >= lengths[:, None]
    target = (torch.rand(b) * lengths).long()
    return torch.randn(b, dim), enc, pad, target


if __name__ == "__main__":
    head = PointerHead()
    opt = torch.optim.Adam(head.parameters(), lr=1e-3)
    for step in range(3):
        dec, enc, pad, target = make_batch()
        loss = pointer_loss(head, dec, enc, pad, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    dec, enc, pad, target = make_batch()
    watched = list(head.parameters())
    got = torch.autograd.grad(pointer_loss(head, dec, enc, pad, target), watched)
    probs = head(dec, enc, pad)
    ref_loss = -torch.log(probs.gather(1, target[:, None])).sum() / dec.size(0)
    ref = torch.autograd.grad(ref_loss, watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the masked-out positions' log(0) makes the gradient nan:",
              sum(int(torch.isnan(g).sum()) for g in got), "entries")

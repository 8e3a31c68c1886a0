# source: pointer networks with a masked softmax written by hand (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation: ExpBackward0"): the exponentials are normalised with e /= e.sum(...), but exp saves its output for the backward
# family: B
# expect: error
# line: 14  (backward: 38)
# fix: normalise out of place: e = e / e.sum(dim=-1, keepdim=True)
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(scores, mask):
    e = scores.masked_fill(~mask, float("-inf")).exp()
    e /= e.sum(dim=-1, keepdim=True)
    return e


class PointerAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.w_ref = nn.Linear(d, d, bias=False)
        self.w_q = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, 1, bias=False)

    def forward(self, ref, query, mask):
        scores = self.v(torch.tanh(self.w_ref(ref) + self.w_q(query).unsqueeze(1))).squeeze(-1)
        return masked_softmax(scores, mask)


if __name__ == "__main__":
    attn = PointerAttention()
    ref, query = torch.randn(4, 7, 16), torch.randn(4, 16)
    mask = torch.ones(4, 7, dtype=torch.bool)
    mask[:, -2:] = False
    probs = attn(ref, query, mask)
    target = torch.randint(0, 5, (4,))
    loss = -probs.gather(1, target.unsqueeze(1)).clamp_min(1e-9).log().mean()
    loss.backward()
    print("loss %.4f" % loss.item())

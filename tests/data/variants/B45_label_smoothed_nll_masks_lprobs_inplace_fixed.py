# source: label-smoothed NLL losses (fairseq-style) ported so that padding is masked on the log-probabilities themselves (lprobs.masked_fill_) instead of on the gathered losses
# family: B
# expect: ok
# line: 20  (backward: 43)
# fix: (fixed version of B45_label_smoothed_nll_masks_lprobs_inplace.py) mask the per-token losses (nll_loss.masked_fill_ / smooth_loss.masked_fill_ on the gather/sum outputs) or use lprobs = lprobs.masked_fill(...) out-of-place; LogSoftmaxBackward needs its output
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def label_smoothed_nll_loss(logits, target, epsilon, ignore_index=0):
    lprobs = F.log_softmax(logits, dim=-1)
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    pad_mask = target.eq(ignore_index)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    nll_loss.masked_fill_(pad_mask, 0.0)
    smooth_loss.masked_fill_(pad_mask, 0.0)
    eps_i = epsilon / lprobs.size(-1)
    return ((1.0 - epsilon) * nll_loss + eps_i * smooth_loss).sum()


class TinyDecoder(nn.Module):
    def __init__(self, vocab=12, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, prev_tokens):
        h, _ = self.rnn(self.emb(prev_tokens))
        return self.out(h)


if __name__ == "__main__":
    model = TinyDecoder()
    tokens = torch.tensor([[5, 3, 7, 2, 0, 0], [4, 4, 9, 1, 6, 2]])
    logits = model(tokens[:, :-1])
    loss = label_smoothed_nll_loss(logits, tokens[:, 1:], epsilon=0.1)
    loss.backward()
    print("loss", loss.item())

# source: masked mean pooling of token embeddings as in UKPLab/sentence-transformers (which clamps the token count with torch.clamp(min=1e-9)), written with torch.where instead: torch.where(lengths > 0, summed / lengths, 0) for an empty (all-padding) row is finite in the forward and nan in the backward
# family: H
# expect: silent
# verify: the encoder's gradient after a batch holding an empty sequence: non-finite entries mean the update is nan
# line: 18
# fix: divide by lengths.clamp_min(1) so the unselected branch stays finite
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def masked_mean(token_states, attention_mask):
    mask = attention_mask.unsqueeze(-1).float()
    summed = (token_states * mask).sum(1)
    lengths = mask.sum(1)
    return torch.where(lengths > 0, summed / lengths, torch.zeros_like(summed))


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        return masked_mean(torch.tanh(self.proj(self.embed(ids))), ids != 0)


if __name__ == "__main__":
    enc = SentenceEncoder()
    opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
    ids = torch.randint(1, 50, (4, 6))
    ids[1, 3:] = 0
    ids[3] = 0
    targets = torch.randn(4, 8)
    loss = F.mse_loss(enc(ids), targets)
    opt.zero_grad()
    loss.backward()
    finite = all(torch.isfinite(p.grad).all() for p in enc.parameters())
    opt.step()
    print("loss %.4f" % loss.item())
    print("MATCH" if finite else "MISMATCH: nan gradient from the empty row's 0/0 in the branch torch.where did not take")

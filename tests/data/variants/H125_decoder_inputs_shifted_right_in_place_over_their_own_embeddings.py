# source: seq2seq decoders that shift the target embeddings one step right by hand (the shift_tokens_right idea applied in place to the embedded sequence; forum threads "teacher forcing input is the same token everywhere"): h[:, 1:] = h[:, :-1] copies a tensor onto an overlapping view of itself, which torch 2.13 does not reject for this layout, and the first embedding is smeared along the sequence
# family: H
# expect: silent
# verify: the logits are compared with those of the intended shift built by torch.cat
# line: 23  (backward: 33)
# fix: copy from a clone: h[:, 1:] = h[:, :-1].clone()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ShiftedDecoderInput(nn.Module):
    def __init__(self, vocab=20, d=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.start = nn.Parameter(torch.zeros(d))
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        h = self.embed(tokens)
        h[:, 1:] = h[:, :-1]
        h[:, 0] = self.start
        return self.out(h)


if __name__ == "__main__":
    model = ShiftedDecoderInput()
    tokens = torch.randint(0, 20, (3, 7))
    logits = model(tokens)
    loss = F.cross_entropy(logits.flatten(0, 1), tokens.flatten())
    loss.backward()
    emb = model.embed(tokens)
    meant = model.out(torch.cat([model.start.expand(3, 1, 6), emb[:, :-1]], dim=1))
    print("loss %.4f" % loss.item())
    print("MISMATCH: the shifted inputs are smeared" if not torch.allclose(logits, meant) else "MATCH")

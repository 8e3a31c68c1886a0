# source: seq2seq training loops (PyTorch "NLP From Scratch" tutorial style) that carry the decoder hidden state across time steps, add every step's loss to a running total and call backward once per batch; each batch restarts from a fresh encoder pass
# family: G
# expect: ok
# line: 30, 32
# fix: none needed - the hidden state and the running loss are carried only within one graph, and a new graph (new encoder pass, new loss = 0) is built for every batch
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

V, D = 11, 16


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(V, D), nn.Embedding(V, D)
        self.encoder = nn.GRU(D, D, batch_first=True)
        self.cell = nn.GRUCell(D, D)
        self.out = nn.Linear(D, V)


def train_batch(model, opt, src, tgt, teacher_forcing=True):
    _, h = model.encoder(model.src_emb(src))
    h = h[-1]
    tok = torch.zeros(src.size(0), dtype=torch.long)
    loss = 0
    for t in range(tgt.size(1)):
        h = model.cell(model.tgt_emb(tok), h)
        logits = model.out(h)
        loss += F.cross_entropy(logits, tgt[:, t])
        tok = tgt[:, t] if teacher_forcing else logits.argmax(-1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item() / tgt.size(1)


if __name__ == "__main__":
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(3):
        src, tgt = torch.randint(1, V, (4, 6)), torch.randint(1, V, (4, 5))
        print("loss", train_batch(model, opt, src, tgt, teacher_forcing=it % 2 == 0))

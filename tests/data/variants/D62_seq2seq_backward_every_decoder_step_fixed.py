# source: forum question "backward at every time step of the decoder to save memory": a GRU seq2seq calls step_loss.backward() inside the decoding loop; the next step's loss goes back through the decoder hidden state and encoder outputs whose graph the previous backward freed
# family: D
# expect: ok
# line: 46, 48  (backward: 48)
# fix: (fixed version of D62_seq2seq_backward_every_decoder_step.py) keep the shared graph alive: step_loss.backward(retain_graph=True) (or sum the step losses and backward once)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SRC_V, TGT_V, D, BOS = 12, 10, 16, 0


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(SRC_V, D)
        self.rnn = nn.GRU(D, D, batch_first=True)

    def forward(self, src):
        out, h = self.rnn(self.emb(src))
        return out, h[-1]


class AttnDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(TGT_V, D)
        self.cell = nn.GRUCell(2 * D, D)
        self.out = nn.Linear(D, TGT_V)

    def forward(self, tok, h, enc_out):
        scores = torch.bmm(enc_out, h.unsqueeze(2)).squeeze(2)
        ctx = torch.bmm(F.softmax(scores, 1).unsqueeze(1), enc_out).squeeze(1)
        h = self.cell(torch.cat([self.emb(tok), ctx], 1), h)
        return self.out(h), h


def train_batch(enc, dec, opt, src, tgt):
    opt.zero_grad()
    enc_out, h = enc(src)
    tok = torch.full((src.size(0),), BOS, dtype=torch.long)
    total = 0.0
    for t in range(tgt.size(1)):
        logits, h = dec(tok, h, enc_out)
        step_loss = F.cross_entropy(logits, tgt[:, t])
        step_loss.backward(retain_graph=True)
        total += step_loss.item()
        tok = tgt[:, t]
    opt.step()
    return total / tgt.size(1)


if __name__ == "__main__":
    enc, dec = Encoder(), AttnDecoder()
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-3)
    src, tgt = torch.randint(0, SRC_V, (4, 7)), torch.randint(1, TGT_V, (4, 5))
    print("loss", train_batch(enc, dec, opt, src, tgt))

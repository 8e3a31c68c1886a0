import torch
import torch.nn as nn

from .attention import LuongAttention


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden, padding_idx=0)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, src):
        outputs, hidden = self.gru(self.embedding(src))
        return outputs, hidden


class AttnDecoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRUCell(hidden * 2, hidden)
        self.attention = LuongAttention(hidden)
        self.out = nn.Linear(hidden * 2, vocab)

    def forward(self, token, hidden, context, enc_outputs, mask):
        hidden = self.gru(torch.cat([self.embedding(token), context], dim=1), hidden)
        context, _ = self.attention(hidden, enc_outputs, mask)
        return self.out(torch.cat([hidden, context], dim=1)), hidden, context


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder, sos=1):
        super().__init__()
        self.encoder, self.decoder, self.sos = encoder, decoder, sos

    def forward(self, src, tgt):
        enc_outputs, hidden = self.encoder(src)
        mask = src != 0
        hidden = hidden.squeeze(0)
        context = torch.zeros_like(hidden)
        token = torch.full((src.size(0),), self.sos, dtype=torch.long)
        logits = []
        for t in range(tgt.size(1)):
            out, hidden, context = self.decoder(token, hidden, context, enc_outputs, mask)
            logits.append(out)
            token = tgt[:, t]
        return torch.stack(logits, dim=1)

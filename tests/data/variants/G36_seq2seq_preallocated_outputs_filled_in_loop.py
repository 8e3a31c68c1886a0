# source: pytorch seq2seq tutorials (bentrevett) that preallocate `outputs = torch.zeros(trg_len, batch, vocab)` and fill `outputs[t] = output` step by step
# family: G
# expect: ok
# line: 34  (backward: 45)
# fix: none needed - each setitem copies into a fresh zeros buffer that no backward saved; the decoder output written in is not modified, and the buffer is consumed only after the loop
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class Decoder(nn.Module):
    def __init__(self, vocab=15, emb=8, hid=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hid)
        self.fc_out = nn.Linear(hid, vocab)

    def forward(self, inp, hidden):
        output, hidden = self.rnn(self.embedding(inp.unsqueeze(0)), hidden)
        return self.fc_out(output.squeeze(0)), hidden


def decode(decoder, trg, hidden, teacher_forcing_ratio=0.5):
    trg_len, batch_size = trg.shape
    outputs = torch.zeros(trg_len, batch_size, decoder.fc_out.out_features)
    inp = trg[0, :]
    for t in range(1, trg_len):
        output, hidden = decoder(inp, hidden)
        outputs[t] = output
        top1 = output.argmax(1)
        inp = trg[t] if random.random() < teacher_forcing_ratio else top1
    return outputs


if __name__ == "__main__":
    dec = Decoder()
    trg = torch.randint(0, 15, (6, 3))
    outputs = decode(dec, trg, torch.zeros(1, 3, 16))
    loss = F.cross_entropy(outputs[1:].reshape(-1, 15), trg[1:].reshape(-1))
    loss.backward()
    print("loss", loss.item())

# source: seq2seq encoders summing the two directions of a bidirectional GRU in place (`fwd, bwd = outputs.chunk(2, dim=2); fwd += bwd`)
# family: C
# expect: error
# line: 22
# fix: outputs = fwd + bwd (out-of-place; chunk returns multiple views that may not be modified in place)
import torch
from torch import nn

torch.manual_seed(0)


class EncoderRNN(nn.Module):
    def __init__(self, vocab=30, hidden=8):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, bidirectional=True)

    def forward(self, input_seq):
        outputs, hidden = self.gru(self.embedding(input_seq))
        fwd, bwd = outputs.chunk(2, dim=2)
        fwd += bwd
        return fwd, hidden[:1]


if __name__ == "__main__":
    enc = EncoderRNN()
    seq = torch.randint(0, 30, (6, 3))
    outputs, hidden = enc(seq)
    loss = outputs.pow(2).mean() + hidden.pow(2).mean()
    loss.backward()
    print("loss", loss.item())

import torch
import torch.nn as nn


class AttnDecoderRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tgt, hidden, enc_outputs):
        emb = self.embedding(tgt)
        scores = torch.bmm(emb, enc_outputs.transpose(1, 2)).softmax(-1)
        context = torch.bmm(scores, enc_outputs)
        out, hidden = self.gru(torch.cat((emb, context), -1), hidden)
        return self.out(out), hidden


class LengthPredictor(nn.Module):
    def __init__(self, hidden, max_len):
        super().__init__()
        self.fc = nn.Linear(hidden, max_len)

    def forward(self, enc_hidden):
        return self.fc(enc_hidden[-1])

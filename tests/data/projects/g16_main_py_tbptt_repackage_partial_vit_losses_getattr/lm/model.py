import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nlayers=1):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, nlayers)
        self.decoder = nn.Linear(ninp, ntoken)
        self.nlayers, self.nhid = nlayers, ninp

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))

    def forward(self, inp, hidden):
        out, hidden = self.rnn(self.encoder(inp), hidden)
        return self.decoder(out), self.decoder.weight.new_zeros(1), hidden


class TinyAttnLM(nn.Module):
    def __init__(self, ntoken, ninp, num_heads=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.qkv = nn.Linear(ninp, 3 * ninp)
        self.scale = (ninp // num_heads) ** -0.5
        self.decoder = nn.Linear(ninp, ntoken)

    def init_hidden(self, bsz):
        return ()

    def forward(self, inp, hidden=None):
        x = self.encoder(inp)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q * self.scale
        attn = (q @ k.transpose(-2, -1)).softmax(-1)
        return self.decoder(attn @ v), None, hidden

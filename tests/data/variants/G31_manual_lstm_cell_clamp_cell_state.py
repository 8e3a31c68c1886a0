# source: hand-written LSTM cells (char-rnn / "LSTM from scratch" posts) that clip the cell state in place after computing h = o * tanh(c)
# family: G
# expect: ok
# line: 25  (backward: 39)
# fix: none needed - tanh saves its output, not c; c is the fresh output of an add (which saves nothing), and the next step's f * c reads c only after the clamp
import torch
import torch.nn as nn

torch.manual_seed(0)


class LSTMCellScratch(nn.Module):
    def __init__(self, n_in, n_hidden, cell_clip=3.0):
        super().__init__()
        self.W = nn.Linear(n_in + n_hidden, 4 * n_hidden)
        self.cell_clip = cell_clip

    def forward(self, x, state):
        h, c = state
        gates = self.W(torch.cat([x, h], dim=1))
        i, f, g, o = gates.chunk(4, dim=1)
        i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)
        c = f * c + i * torch.tanh(g)
        h = o * torch.tanh(c)
        c.clamp_(-self.cell_clip, self.cell_clip)
        return h, (h, c)


if __name__ == "__main__":
    cell = LSTMCellScratch(5, 8)
    head = nn.Linear(8, 1)
    xs = torch.randn(6, 4, 5)
    state = (torch.zeros(4, 8), torch.zeros(4, 8))
    outs = []
    for x in xs:
        h, state = cell(x, state)
        outs.append(head(h))
    loss = torch.stack(outs).pow(2).mean()
    loss.backward()
    print("loss", loss.item())

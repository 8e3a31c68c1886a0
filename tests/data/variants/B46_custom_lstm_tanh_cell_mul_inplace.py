# source: memory-minded custom LSTM cells (e.g. layer-normalised LSTM ports) computing the hidden state as torch.tanh(c).mul_(o); TanhBackward needs the tanh output that mul_ overwrites
# family: B
# expect: error
# line: 25  (backward: 37)
# fix: multiply out-of-place: h = o * torch.tanh(c)
import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerNormLSTMCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.ih = nn.Linear(n_in, 4 * n_hidden, bias=False)
        self.hh = nn.Linear(n_hidden, 4 * n_hidden, bias=False)
        self.ln_gates = nn.LayerNorm(4 * n_hidden)
        self.ln_cell = nn.LayerNorm(n_hidden)

    def forward(self, x, state):
        h, c = state
        gates = self.ln_gates(self.ih(x) + self.hh(h))
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.tanh(self.ln_cell(c)).mul_(torch.sigmoid(o))
        return h, (h, c)


if __name__ == "__main__":
    cell = LayerNormLSTMCell(5, 8)
    state = (torch.zeros(3, 8), torch.zeros(3, 8))
    outs = []
    for x in torch.randn(4, 3, 5):
        h, state = cell(x, state)
        outs.append(h)
    loss = torch.stack(outs).pow(2).mean()
    loss.backward()
    print("loss", loss.item())

# source: forum "a view of a leaf Variable that requires grad is being used in an in-place operation" from an RNN loop that fills a preallocated outputs = torch.zeros(..., requires_grad=True)
# family: A
# expect: ok
# line: 25
# fix: (fixed version of A40_rnn_outputs_preallocated_with_requires_grad.py) preallocate without requires_grad (outputs = torch.zeros(seq_len, batch, hidden)) or collect the steps in a list and torch.stack them
import torch
import torch.nn as nn

torch.manual_seed(0)


class Elman(nn.Module):
    def __init__(self, n_in=4, hidden=8):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.RNNCell(n_in, hidden)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, xs):
        seq_len, batch, _ = xs.shape
        outputs = torch.zeros(seq_len, batch, self.hidden)
        h = torch.zeros(batch, self.hidden)
        for t in range(seq_len):
            h = self.cell(xs[t], h)
            outputs[t] = h
        return self.readout(outputs)


if __name__ == "__main__":
    model = Elman()
    xs, ys = torch.randn(5, 3, 4), torch.randn(5, 3, 1)
    loss = nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    print("loss", loss.item())

# source: sequence models unrolled by hand with nn.RNNCell/LSTMCell that call h.detach() at every time step "to avoid backpropagating through the graph a second time" (forum threads "RNN does not learn long dependencies", "detach hidden state every step"): the cut is inside one sequence, so the loss reaches only the last step's input and earlier time steps get no gradient
# family: H
# expect: ok
# verify: the input's gradient at the first time step is compared with zero
# line: 23
# fix: (fixed version of H147_rnn_cell_hidden_state_detached_at_every_time_step_of_one_sequence.py) detach between sequences (truncated BPTT), not between steps: h = self.cell(x[:, t], h)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeqRegressor(nn.Module):
    def __init__(self, d_in=3, d_h=6):
        super().__init__()
        self.cell = nn.RNNCell(d_in, d_h)
        self.head = nn.Linear(d_h, 1)

    def forward(self, x):
        h = x.new_zeros(x.size(0), self.cell.hidden_size)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return self.head(h)


if __name__ == "__main__":
    model = SeqRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 5, 3, requires_grad=True)
    y = x.detach().sum(dim=(1, 2)).unsqueeze(1)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("MISMATCH: only the last step is backpropagated" if x.grad[:, 0].abs().sum() == 0 else "MATCH")

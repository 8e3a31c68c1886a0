# source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57 ("403: question about h_state = h_state.data": re-wrapping the hidden state with .data before the next batch cuts it from the graph)
# family: G
# expect: ok
# line: 34
# fix: none needed - the carried hidden state is re-wrapped with .data (same effect as .detach() here: it is never modified in place)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=32, num_layers=1, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        return self.out(r_out), h_state


if __name__ == "__main__":
    rnn = RNN()
    optimizer = torch.optim.Adam(rnn.parameters(), lr=0.02)
    loss_func = nn.MSELoss()
    h_state = None
    for step in range(4):
        steps = torch.linspace(step * math.pi, (step + 1) * math.pi, 10)
        x, y = torch.sin(steps)[None, :, None], torch.cos(steps)[None, :, None]
        prediction, h_state = rnn(x, h_state)
        h_state = h_state.data
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())

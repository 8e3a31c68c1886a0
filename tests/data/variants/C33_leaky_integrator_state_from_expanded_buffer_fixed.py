# source: spiking / leaky-integrator and EMA-feature modules that start the per-batch state from an expanded buffer and update it in place
# family: C
# expect: ok
# line: 24
# fix: (fixed version of C33_leaky_integrator_state_from_expanded_buffer.py) materialise the batch state before writing: state = self.init_state.expand(B, -1).clone()
import torch
import torch.nn as nn

torch.manual_seed(0)


class LeakyIntegrator(nn.Module):
    def __init__(self, d_in=6, d=8, decay=0.9):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.readout = nn.Linear(d, 2)
        self.decay = decay
        self.register_buffer("init_state", torch.zeros(1, d))

    def forward(self, x):
        B, T, _ = x.shape
        state = self.init_state.expand(B, -1).clone()
        for t in range(T):
            state.mul_(self.decay).add_(torch.tanh(self.inp(x[:, t])))
        return self.readout(state)


if __name__ == "__main__":
    model = LeakyIntegrator()
    x, y = torch.randn(3, 4, 6), torch.randint(0, 2, (3,))
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    print("loss", loss.item())

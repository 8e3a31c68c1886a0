# source: https://github.com/pytorch/pytorch/pull/32839 (the check behind "A view was created in no_grad mode and is being modified inplace with grad mode enabled": "You should have both the view and inplace inside the no_grad block ... Or both outside"), hit in practice in https://github.com/pytorch/torchdynamo/issues/1189 and https://github.com/ccarliu/m3ae/issues/15; here a slot memory takes the window view of its bank in a @torch.no_grad() reset and the forward writes the encoder states into it
# family: H
# expect: error
# line: 24  (backward: 27)
# fix: take the window view outside no_grad (reset() only clears the bank under no_grad; the view is made with grad enabled), so the write of the encoder states is recorded
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SlotMemory(nn.Module):
    """A bank of slots; each episode is written into a window of it (the rest stays empty)."""

    def __init__(self, capacity=6, dim=8):
        super().__init__()
        self.register_buffer("bank", torch.zeros(capacity, dim))
        self.window = None

    @torch.no_grad()
    def reset(self, n_items):
        self.bank = torch.zeros_like(self.bank)
        self.window = self.bank.narrow(0, 0, n_items)

    def write(self, values):
        self.window.copy_(values)

    def read(self, query):
        attn = torch.softmax(query @ self.bank.t(), dim=-1)
        return attn @ self.bank


class MemoryReader(nn.Module):
    def __init__(self, din=5, dim=8, n_out=2):
        super().__init__()
        self.encoder = nn.Linear(din, dim)
        self.memory = SlotMemory(dim=dim)
        self.head = nn.Linear(2 * dim, n_out)

    def forward(self, episode, query):
        self.memory.reset(episode.size(0))
        self.memory.write(torch.tanh(self.encoder(episode)))
        q = torch.tanh(self.encoder(query))
        return self.head(torch.cat([q, self.memory.read(q)], dim=-1))


if __name__ == "__main__":
    model = MemoryReader()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        episode, query, target = torch.randn(4, 5), torch.randn(5), torch.randn(2)
        loss = F.mse_loss(model(episode, query), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

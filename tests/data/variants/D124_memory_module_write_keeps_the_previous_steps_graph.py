# source: memory-augmented networks that keep a slot memory as a module attribute updated in forward (forum threads "Trying to backward through the graph a second time" with a recurrent memory carried across batches): the new memory is built from the old one and the write projection, and the attribute keeps the previous step's graph into the next step's loss
# family: D
# expect: error
# line: 25  (backward: 36)
# fix: carry the memory without its graph: self.memory = memory.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SlotMemoryReader(nn.Module):
    def __init__(self, d=16, slots=6, n_classes=3):
        super().__init__()
        self.memory = torch.zeros(slots, d)
        self.write = nn.Linear(d, d)
        self.read = nn.Linear(2 * d, n_classes)

    def forward(self, x):
        written = self.write(x).mean(0, keepdim=True).expand_as(self.memory)
        memory = 0.9 * self.memory + 0.1 * written
        attn = torch.softmax(x @ memory.t(), dim=-1)
        recalled = attn @ memory
        self.memory = memory
        return self.read(torch.cat([x, recalled], dim=-1))


if __name__ == "__main__":
    model = SlotMemoryReader()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())

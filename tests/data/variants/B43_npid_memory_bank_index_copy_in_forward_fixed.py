# source: instance-discrimination (NPID / lemniscate) memory banks updated with index_copy_ inside forward, after the bank was used in the similarity matmul (mm saves the bank because the features require grad)
# family: B
# expect: ok
# line: 24  (backward: 36)
# fix: (fixed version of B43_npid_memory_bank_index_copy_in_forward.py) update the memory bank after loss.backward() (or use self.memory.clone() in the similarity)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MemoryBank(nn.Module):
    def __init__(self, n_data=20, dim=8, T=0.07, momentum=0.5):
        super().__init__()
        self.T, self.momentum = T, momentum
        self.register_buffer("memory", F.normalize(torch.randn(n_data, dim), dim=1))

    def forward(self, feats, idx):
        out = torch.mm(feats, self.memory.clone().t()) / self.T
        with torch.no_grad():
            pos = self.memory.index_select(0, idx)
            pos = F.normalize(pos * self.momentum + feats.detach() * (1 - self.momentum), dim=1)
            self.memory.index_copy_(0, idx, pos)
        return out


if __name__ == "__main__":
    encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
    bank = MemoryBank()
    opt = torch.optim.SGD(encoder.parameters(), lr=0.03)
    x, idx = torch.randn(5, 12), torch.tensor([0, 3, 7, 11, 19])
    logits = bank(F.normalize(encoder(x), dim=1), idx)
    loss = F.cross_entropy(logits, idx)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

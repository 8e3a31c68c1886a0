# source: https://github.com/lucidrains/block-recurrent-transformer-pytorch/issues/4 and Transformer-XL's _update_mems (run under torch.no_grad() and .detach()): a segment-recurrent model that keeps its layer memories with their graph fails on the next segment's backward
# family: D
# expect: error
# line: 41  (backward: 56)
# fix: cut the memory from the graph when it is stored: new_mems.append(torch.cat([mem, h], dim=1)[:, -self.mem_len:].detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class XLLayer(nn.Module):
    def __init__(self, d=16, heads=2):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, d))
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, h, mem):
        ctx = torch.cat([mem, h], dim=1)
        h = self.norm1(h + self.attn(h, ctx, ctx, need_weights=False)[0])
        return self.norm2(h + self.ff(h))


class MemTransformerLM(nn.Module):
    def __init__(self, vocab=50, d=16, n_layers=2, mem_len=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(XLLayer(d) for _ in range(n_layers))
        self.out = nn.Linear(d, vocab)
        self.d, self.mem_len = d, mem_len

    def init_mems(self, batch):
        return [torch.zeros(batch, 0, self.d) for _ in self.layers]

    def forward(self, tokens, mems):
        h = self.emb(tokens)
        new_mems = []
        for layer, mem in zip(self.layers, mems):
            new_mems.append(torch.cat([mem, h], dim=1)[:, -self.mem_len:])
            h = layer(h, mem)
        return self.out(h), new_mems


if __name__ == "__main__":
    model = MemTransformerLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = torch.randint(0, 50, (4, 41))
    mems = model.init_mems(4)
    for start in range(0, 40, 8):
        seg, target = stream[:, start:start + 8], stream[:, start + 1:start + 9]
        logits, mems = model(seg, mems)
        loss = F.cross_entropy(logits.reshape(-1, 50), target.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("segment", start // 8, "loss", loss.item())

# source: https://github.com/lucidrains/block-recurrent-transformer-pytorch/issues/4 (next_states.append(layer_next_states.detach()): the recurrent memory handed to the next segment is detached, gradients do not cross segments)
# family: G
# expect: ok
# line: 38
# fix: none needed - the memories carried to the next segment are detached when they are stored
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RecurrentBlock(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.mix = nn.Linear(2 * d, d)
        self.ff = nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d))

    def forward(self, h, state):
        summary = state.mean(dim=1, keepdim=True).expand_as(h)
        h = h + self.mix(torch.cat([h, summary], dim=-1))
        return h + self.ff(h), h[:, -4:]


class BlockRecurrentLM(nn.Module):
    def __init__(self, vocab=40, d=16, depth=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(RecurrentBlock(d) for _ in range(depth))
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens, states):
        h = self.emb(tokens)
        next_states = []
        for block, state in zip(self.blocks, states):
            h, new_state = block(h, state)
            next_states.append(new_state)
        return self.out(h), [s.detach() for s in next_states]


if __name__ == "__main__":
    model = BlockRecurrentLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = torch.randint(0, 40, (2, 33))
    states = [torch.zeros(2, 4, 16) for _ in model.blocks]
    for start in range(0, 32, 8):
        logits, states = model(seq[:, start:start + 8], states)
        loss = F.cross_entropy(logits.reshape(-1, 40), seq[:, start + 1:start + 9].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("segment", start // 8, "loss", loss.item())

# source: LLaMA-style RMSNorm (transformers LlamaRMSNorm: variance = hidden_states.pow(2).mean(-1); hidden_states = hidden_states * torch.rsqrt(variance + eps)) rewritten with an in-place mul_ to save activation memory; PowBackward saved hidden_states
# family: B
# expect: error
# line: 21  (backward: 69)
# fix: hidden_states = hidden_states * torch.rsqrt(variance + self.eps) (out-of-place)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states.mul_(torch.rsqrt(variance + self.eps))
        return self.weight * hidden_states


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.input_layernorm = RMSNorm(dim)
        self.mlp = MLP(dim, 4 * dim)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([DecoderLayer(dim) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        h = self.embed_tokens(ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm(h))


if __name__ == "__main__":
    model = TinyLM()
    ids = torch.randint(0, 64, (2, 10))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 64), ids[:, 1:].reshape(-1))
    loss.backward()
    print("loss", round(loss.item(), 4))

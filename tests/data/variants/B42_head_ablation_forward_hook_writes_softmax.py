# source: interpretability "head ablation / activation patching" scripts that zero an attention head through a forward hook writing into the nn.Softmax module's output in place, then backpropagate for attribution
# family: B
# expect: error
# line: 29  (backward: 38)
# fix: return a modified copy from the hook (out = out.clone(); out[:, head] = 0; return out), which replaces the module output instead of rewriting the saved one
import torch
import torch.nn as nn

torch.manual_seed(0)


class MHA(nn.Module):
    def __init__(self, d=12, heads=3):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.softmax = nn.Softmax(dim=-1)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        probs = self.softmax(q @ k.transpose(-1, -2) / self.dk ** 0.5)
        return self.o((probs @ v).transpose(1, 2).reshape(B, T, D))


def ablate_head(head):
    def hook(module, inputs, output):
        output[:, head] = 0.0
    return hook


if __name__ == "__main__":
    attn = MHA()
    handle = attn.softmax.register_forward_hook(ablate_head(1))
    x = torch.randn(2, 4, 12, requires_grad=True)
    score = attn(x).sum()
    score.backward()
    handle.remove()
    print("attribution", (x.grad * x).sum().item())

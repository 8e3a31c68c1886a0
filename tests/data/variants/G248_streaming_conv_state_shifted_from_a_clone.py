# source: streaming causal convolution with a rolling state buffer (the conv_state of Mamba-style and streaming-ASR decoders, which torch-based implementations shift with torch.roll or a copy): the buffer is shifted with an overlapping slice assignment whose right-hand side is cloned first, so the write reads no element it has already overwritten
# family: G
# expect: ok
# line: 20
# fix: none needed: the right-hand side is a clone, the slices do not share memory
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StreamingCausalConv(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(0.3 * torch.randn(channels, kernel_size))

    def step(self, state, frame):
        state = state.clone()
        state[:, :, 1:] = state[:, :, :-1].clone()
        state[:, :, 0] = frame
        return state, (state * self.weight.flip(-1)).sum(-1)

    def full(self, x):
        k = self.weight.shape[1]
        return F.conv1d(F.pad(x, (k - 1, 0)), self.weight.unsqueeze(1), groups=x.shape[1])


if __name__ == "__main__":
    conv = StreamingCausalConv(channels=3, kernel_size=4)
    x = torch.randn(2, 3, 10)
    state = x.new_zeros(2, 3, 4)
    outs = []
    for t in range(x.shape[-1]):
        state, y = conv.step(state, x[:, :, t])
        outs.append(y)
    streamed = torch.stack(outs, dim=-1)
    g_stream = torch.autograd.grad(streamed.pow(2).sum(), conv.weight)[0]
    g_full = torch.autograd.grad(conv.full(x).pow(2).sum(), conv.weight)[0]
    ok = torch.allclose(streamed, conv.full(x), atol=1e-6) and torch.allclose(g_stream, g_full, atol=1e-5)
    print("MATCH" if ok else "MISMATCH: the streamed convolution differs from the full one")

# source: hand-rolled STFT / framing front-ends: overlapping frames from Tensor.unfold are windowed in place (`frames *= window`); with hop < frame the frames share memory
# family: C
# expect: ok
# verify: (fixed) unfold with hop < frame returns overlapping views of the signal; the in-place window multiplies shared samples several times, so both the features and the gradients differ from the out-of-place `frames * window`; MISMATCH is printed
# line: 26  (backward: 36)
# fix: (fixed version of C38_unfold_frames_window_inplace.py) window out-of-place: frames = frames * window
import torch
import torch.nn as nn

torch.manual_seed(0)


class FrameFrontEnd(nn.Module):
    def __init__(self, frame=8, hop=4, n_out=5, inplace_window=True):
        super().__init__()
        self.frame, self.hop = frame, hop
        self.pre_emphasis = nn.Conv1d(1, 1, 2, bias=False)
        self.proj = nn.Linear(frame, n_out)
        self.register_buffer("window", torch.hann_window(frame))
        self.inplace_window = inplace_window

    def forward(self, wav):
        x = self.pre_emphasis(wav.unsqueeze(1)).squeeze(1)
        frames = x.unfold(-1, self.frame, self.hop)
        if self.inplace_window:
            frames = frames * self.window
        else:
            frames = frames * self.window
        return self.proj(frames.abs() + 1e-3).mean(1)


def grads(inplace_window):
    torch.manual_seed(0)
    fe = FrameFrontEnd(inplace_window=inplace_window)
    wav = torch.randn(2, 33, requires_grad=True)
    fe(wav).pow(2).sum().backward()
    return wav.grad


if __name__ == "__main__":
    got, ref = grads(True), grads(False)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())

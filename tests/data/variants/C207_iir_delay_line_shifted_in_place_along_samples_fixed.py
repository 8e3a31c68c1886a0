# source: https://github.com/pytorch/pytorch/issues/144861 (overlapping in-place copies are not rejected when the overlap is not along the leading dim: x[..., 1:] = x[..., :-1] smears the first sample over the row on CPU); here an audio model keeps a delay line of the last taps of each channel and shifts it in place along the sample axis
# family: C
# expect: ok
# verify: the delay line and the filter's gradient are compared with the ones from a delay line shifted out of place (torch.cat)
# line: 18
# fix: (fixed version of C207_iir_delay_line_shifted_in_place_along_samples.py) shift from a copy: self.taps[..., 1:] = self.taps[..., :-1].clone() (or rebuild with torch.cat)
import torch
import torch.nn as nn

torch.manual_seed(0)


class DelayLine:
    def __init__(self, channels, n_taps):
        self.taps = torch.zeros(channels, n_taps)

    def push(self, sample):
        self.taps[..., 1:] = self.taps[..., :-1].clone()
        self.taps[..., 0] = sample
        return self.taps


class CatDelayLine(DelayLine):
    def push(self, sample):
        self.taps = torch.cat([sample.unsqueeze(-1), self.taps[..., :-1]], dim=-1)
        return self.taps


if __name__ == "__main__":
    channels, n_taps = 2, 5
    fir = nn.Linear(n_taps, 1, bias=False)
    line, ref_line = DelayLine(channels, n_taps), CatDelayLine(channels, n_taps)
    signal = torch.randn(8, channels)
    for t in range(signal.shape[0]):
        taps = line.push(signal[t])
        ref_taps = ref_line.push(signal[t])
    got = torch.autograd.grad(fir(taps).pow(2).sum(), fir.weight)[0]
    ref = torch.autograd.grad(fir(ref_taps).pow(2).sum(), fir.weight)[0]
    print("delay line of channel 0:", [round(v, 3) for v in line.taps[0].tolist()])
    same = torch.equal(line.taps, ref_line.taps) and torch.allclose(got, ref)
    print("MATCH" if same else "MISMATCH: the in-place shift smeared the newest sample; expected "
          + str([round(v, 3) for v in ref_line.taps[0].tolist()]))

# source: delta (first-difference) features of a spectrogram for a keyword-spotting front end, the 'previous frame' computed by shifting a copy of the features one step along time in place (torchaudio's compute_deltas and speech front ends pad instead): prev.narrow(-1, 1, T - 1).copy_(prev.narrow(-1, 0, T - 1)) reads and writes one storage, the copy runs forward and smears the first frame over the whole row
# family: C
# expect: silent
# verify: the delta features and the front end's gradient are compared with the ones computed from a padded shift
# line: 17
# fix: copy the shifted frames from the source tensor, not from the buffer being written: prev.narrow(-1, 1, T - 1).copy_(spec.narrow(-1, 0, T - 1))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def delta_features(spec):
    T = spec.shape[-1]
    prev = spec.clone()
    prev.narrow(-1, 1, T - 1).copy_(prev.narrow(-1, 0, T - 1))
    return torch.cat([spec, spec - prev], dim=1)


def reference_delta(spec):
    prev = F.pad(spec[..., :-1], (1, 0), mode="replicate")
    return torch.cat([spec, spec - prev], dim=1)


if __name__ == "__main__":
    frontend = nn.Conv1d(1, 8, 5, padding=2)
    classifier = nn.Sequential(nn.Conv1d(16, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 4))
    wave, label = torch.randn(4, 1, 20), torch.randint(0, 4, (4,))
    results = []
    for feats in (delta_features, reference_delta):
        spec = frontend(wave)
        loss = F.cross_entropy(classifier(feats(spec)), label)
        grad = torch.autograd.grad(loss, frontend.weight)[0]
        results.append((feats(spec).detach(), grad))
    (got, g_got), (ref, g_ref) = results
    same = torch.allclose(got, ref) and torch.allclose(g_got, g_ref)
    print("MATCH" if same else "MISMATCH: the in-place shift smeared the first frame (max error %.3f)" % (got - ref).abs().max())

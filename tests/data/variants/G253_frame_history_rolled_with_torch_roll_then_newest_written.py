# source: streaming keyword-spotting models that keep a window of past frames (a ring of features updated per chunk): the history is shifted with torch.roll, which returns a new tensor, and only then is the newest frame written into slot 0, so no slot reads one that was already overwritten
# family: G
# expect: ok
# line: 14
# fix: none needed: torch.roll makes a copy before the write
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def push_frame(history, frame):
    history = torch.roll(history, shifts=1, dims=1)
    history[:, 0] = frame
    return history


if __name__ == "__main__":
    encoder = nn.Linear(6, 8)
    classifier = nn.Linear(4 * 8, 2)
    opt = torch.optim.SGD(list(encoder.parameters()) + list(classifier.parameters()), lr=0.1)
    frames = torch.randn(3, 7, 6)
    history = torch.zeros(3, 4, 8)
    feats = encoder(frames)
    for t in range(frames.shape[1]):
        history = push_frame(history, feats[:, t])
    loss = F.cross_entropy(classifier(history.flatten(1)), torch.tensor([0, 1, 0]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    expected = feats.detach().flip(1)[:, :4]
    same = torch.allclose(history.detach(), expected)
    print("MATCH" if same else "MISMATCH: the history does not hold the last four frames")

# source: streaming / autoregressive models that feed the previous frame's features (a one-step delay line written by hand, as in forum threads "my lagged features are all the first frame"): the register is shifted with an ascending loop, lagged[:, t] = lagged[:, t - 1], so each step copies the slot it just overwrote and every frame ends up holding frame 0 (values and gradients smeared)
# family: H
# expect: silent
# verify: the hand-shifted features are compared with a padded one-step delay of the same frames
# line: 16
# fix: shift from the end backwards: for t in range(lagged.shape[1] - 1, 0, -1)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def delay_one_step(frames):
    lagged = frames.clone()
    for t in range(1, lagged.shape[1]):
        lagged[:, t] = lagged[:, t - 1]
    lagged[:, 0] = 0.0
    return lagged


if __name__ == "__main__":
    encoder = nn.Linear(6, 8)
    predictor = nn.Linear(16, 6)
    opt = torch.optim.Adam(list(encoder.parameters()) + list(predictor.parameters()), lr=1e-2)
    x = torch.randn(4, 10, 6)
    feats = encoder(x)
    lagged = delay_one_step(feats)
    pred = predictor(torch.cat([feats, lagged], dim=-1))
    loss = F.mse_loss(pred[:, :-1], x[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    reference = F.pad(feats.detach(), (0, 0, 1, 0))[:, :-1]
    same = torch.allclose(lagged.detach(), reference)
    print("loss %.4f" % loss.item())
    print("MATCH" if same else "MISMATCH: the delayed features all hold the first frame")

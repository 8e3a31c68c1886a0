# source: the fix for https://github.com/pytorch/pytorch/issues/144861 / https://github.com/pytorch/pytorch/issues/906 ("t[1:] = t[:-1].clone() # right result"): the history buffer of an RL agent is shifted from a copy (torch.roll) before the newest observation is written
# family: G
# expect: ok
# line: 18
# fix: none needed - the shift reads a copy, so no element is overwritten before it is read
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FrameStack:
    def __init__(self, n_envs, history, obs_dim):
        self.frames = torch.zeros(n_envs, history, obs_dim)

    def push(self, obs):
        self.frames = torch.roll(self.frames, shifts=1, dims=1)
        self.frames[:, 0] = obs
        return self.frames.flatten(1)


if __name__ == "__main__":
    stack = FrameStack(2, 4, 3)
    value = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(value.parameters(), lr=1e-3)
    history = []
    for t in range(6):
        obs = torch.randn(2, 3)
        history.insert(0, obs)
        state = stack.push(obs)
        loss = F.mse_loss(value(state).squeeze(-1), torch.randn(2))
        opt.zero_grad()
        loss.backward()
        opt.step()
    expected = torch.stack(history[:4], dim=1)
    print("MATCH" if torch.equal(stack.frames, expected) else "MISMATCH: the frame stack is not the last four observations")

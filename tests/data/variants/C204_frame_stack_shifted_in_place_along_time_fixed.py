# source: https://github.com/pytorch/pytorch/issues/144861 ("Region check for in-place read and write does not always work": arr[1:, :] = arr[:-1, :] raises, but arr[:, 1:] = arr[:, :-1] gives tensor([[0, 0, 0], [3, 3, 3], [6, 6, 6]]) on CPU, no error); see also https://github.com/pytorch/pytorch/issues/906; here an RL agent keeps its last T observations in a (batch, time, features) buffer shifted in place along time
# family: C
# expect: ok
# verify: the frame stack and the value network's gradient are compared with the ones computed from a stack shifted out of place (torch.roll)
# line: 21  (backward: 54)
# fix: (fixed version of C204_frame_stack_shifted_in_place_along_time.py) shift from a copy: self.frames[:, 1:] = self.frames[:, :-1].clone() (or self.frames = torch.roll(self.frames, 1, dims=1))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FrameStack:
    """The last `history` observations of each environment, newest first."""

    def __init__(self, n_envs, history, obs_dim):
        self.frames = torch.zeros(n_envs, history, obs_dim)

    def push(self, obs):
        self.frames[:, 1:] = self.frames[:, :-1].clone()
        self.frames[:, 0] = obs
        return self.frames.flatten(1)


class ReferenceStack(FrameStack):
    def push(self, obs):
        self.frames = torch.roll(self.frames, 1, dims=1)
        self.frames[:, 0] = obs
        return self.frames.flatten(1)


class ValueNet(nn.Module):
    def __init__(self, history=4, obs_dim=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(history * obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, stacked):
        return self.net(stacked).squeeze(-1)


if __name__ == "__main__":
    n_envs, history, obs_dim = 2, 4, 3
    stack, ref_stack = FrameStack(n_envs, history, obs_dim), ReferenceStack(n_envs, history, obs_dim)
    value = ValueNet(history, obs_dim)
    opt = torch.optim.Adam(value.parameters(), lr=1e-3)
    observations = [torch.randn(n_envs, obs_dim) for _ in range(6)]
    for t, obs in enumerate(observations):
        state = stack.push(obs)
        ref_state = ref_stack.push(obs)
        returns = torch.randn(n_envs)
        loss = F.mse_loss(value(state), returns)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("newest-first stack of env 0:", stack.frames[0, :, 0].tolist())

    got = torch.autograd.grad(value(stack.frames.flatten(1)).sum(), list(value.parameters()))
    ref = torch.autograd.grad(value(ref_stack.frames.flatten(1)).sum(), list(value.parameters()))
    same = torch.equal(stack.frames, ref_stack.frames) and all(torch.allclose(g, r) for g, r in zip(got, ref))
    print("MATCH" if same else "MISMATCH: the in-place shift smeared the newest frame over the history; expected "
          + str(ref_stack.frames[0, :, 0].tolist()))

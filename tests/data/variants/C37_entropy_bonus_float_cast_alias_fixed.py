# source: entropy-regularised policy / confidence-penalty losses that "upcast" the softmax with .float() and floor it in place (on float32 input .float() returns the same tensor)
# family: C
# expect: ok
# line: 17  (backward: 36)
# fix: (fixed version of C37_entropy_bonus_float_cast_alias.py) floor out-of-place: probs = probs.clamp(min=eps) (.float() is a no-op alias of the softmax output)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def entropy_bonus(logits, eps=1e-3):
    probs = F.softmax(logits, dim=-1).float()
    probs = probs.clamp(min=eps)
    return -(probs * probs.log()).sum(-1).mean() / math.log(logits.size(-1))


class Policy(nn.Module):
    def __init__(self, obs=8, n_actions=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, n_actions))

    def forward(self, obs):
        return self.net(obs) * 4.0


if __name__ == "__main__":
    policy = Policy()
    obs, actions, adv = torch.randn(10, 8), torch.randint(0, 6, (10,)), torch.randn(10)
    logits = policy(obs)
    pg_loss = -(F.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1) * adv).mean()
    loss = pg_loss - 0.01 * entropy_bonus(logits)
    loss.backward()
    print("loss", loss.item())

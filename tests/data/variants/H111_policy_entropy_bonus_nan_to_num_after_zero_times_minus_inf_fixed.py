# source: https://github.com/huggingface/trl/pull/7252 (entropy from masked logits: -(exp(logps) * logps) cleaned with nan_to_num): the invalid actions' logits are -inf, their probability is exactly 0 and 0 * -inf is NaN; nan_to_num hides it in the forward, but the multiply's backward still gives NaN gradients
# family: H
# expect: ok
# verify: the policy's weight gradient after the backward is checked for non-finite values
# line: 26  (backward: 40)
# fix: (fixed version of H111_policy_entropy_bonus_nan_to_num_after_zero_times_minus_inf.py) use a finite log-probability for the masked actions: logp = torch.log_softmax(logits, -1).clamp_min(-1e4)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedPolicy(nn.Module):
    def __init__(self, d=6, n_actions=5):
        super().__init__()
        self.body = nn.Linear(d, 16)
        self.logits = nn.Linear(16, n_actions)

    def forward(self, obs, legal):
        raw = self.logits(torch.tanh(self.body(obs)))
        return raw.masked_fill(~legal, float("-inf"))


def entropy_bonus(logits):
    logp = torch.log_softmax(logits, -1).clamp_min(-1e4)
    return -(logp.exp() * logp).nan_to_num(0.0).sum(-1).mean()


if __name__ == "__main__":
    policy = MaskedPolicy()
    obs = torch.randn(8, 6)
    legal = torch.rand(8, 5) > 0.3
    legal[:, 0] = True
    actions = torch.zeros(8, dtype=torch.long)
    advantages = torch.randn(8)
    logits = policy(obs, legal)
    chosen = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    loss = -(chosen * advantages).mean() - 0.01 * entropy_bonus(logits)
    loss.backward()
    finite = bool(torch.isfinite(policy.body.weight.grad).all())
    print("loss %.4f" % loss.item())
    print("MATCH" if finite else "MISMATCH: nan gradient from the masked actions' entropy")

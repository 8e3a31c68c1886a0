# source: https://github.com/huggingface/trl/pull/6140 (review "Entropy bonus lacks gradients": the per-token entropies come from a helper that runs under torch.no_grad(), "the bonus changes the reported loss without contributing gradients, so entropy regularization does not actually encourage exploration"); same symptom in https://github.com/rlworkgroup/garage/issues/281
# family: H
# expect: ok
# verify: the policy's gradient is compared with autograd's gradient of the same actor loss with a differentiable entropy
# line: 31  (backward: 46)
# fix: (fixed version of H44_entropy_bonus_from_no_grad_logging_helper.py) compute the entropy used in the loss with grad enabled (entropy = dist.entropy().mean()); keep the no_grad helper for logging only
import torch
import torch.nn as nn

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self, obs_dim=6, n_actions=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))

    def dist(self, obs):
        return torch.distributions.Categorical(logits=self.body(obs))


@torch.no_grad()
def policy_stats(policy, obs):
    d = policy.dist(obs)
    return {"entropy": d.entropy().mean(), "max_prob": d.probs.max(dim=-1).values.mean()}


def actor_loss(policy, obs, actions, advantages, ent_coef):
    d = policy.dist(obs)
    pg_loss = -(d.log_prob(actions) * advantages).mean()
    entropy = d.entropy().mean()
    return pg_loss - ent_coef * entropy, entropy


if __name__ == "__main__":
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-3)
    ent_coef = 0.5
    for update in range(3):
        obs = torch.randn(64, 6)
        with torch.no_grad():
            actions = policy.dist(obs).sample()
        advantages = torch.randn(64)
        loss, entropy = actor_loss(policy, obs, actions, advantages, ent_coef)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("update", update, "entropy", round(float(entropy), 4))

    obs, advantages = torch.randn(64, 6), torch.randn(64)
    actions = policy.dist(obs).sample()
    got = torch.autograd.grad(actor_loss(policy, obs, actions, advantages, ent_coef)[0], list(policy.parameters()))
    d = policy.dist(obs)
    ref_loss = -(d.log_prob(actions) * advantages).mean() - ent_coef * d.entropy().mean()
    ref = torch.autograd.grad(ref_loss, list(policy.parameters()))
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the entropy bonus contributes no gradient; difference",
              max((g - r).abs().max().item() for g, r in zip(got, ref)))

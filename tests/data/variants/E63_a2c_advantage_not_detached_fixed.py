# source: (fixed version of E63_a2c_advantage_not_detached.py) A2C / REINFORCE-with-baseline tutorials whose policy loss uses advantage = returns - values without .detach(): the policy-gradient term then also trains the critic (pushing V(s) up wherever log pi is large), a silent bug reported in many forum threads
# family: E
# expect: ok
# line: 44  (backward: 56)
# fix: detach the baseline inside the policy loss: advantages = (returns - values).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT, T, GAMMA = 6, 3, 12, 0.97


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Linear(32, ACT))
        self.critic = nn.Sequential(nn.Linear(OBS, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, obs):
        return self.actor(obs), self.critic(obs).squeeze(-1)


def rollout(model, gen):
    obs = torch.randn(T, OBS, generator=gen)
    rewards = torch.randn(T, generator=gen)
    logits, values = model(obs)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    return dist.log_prob(actions), values, rewards


def discounted_returns(rewards):
    out, running = [], 0.0
    for r in reversed(rewards.tolist()):
        running = r + GAMMA * running
        out.append(running)
    return torch.tensor(out[::-1])


def a2c_loss(log_probs, values, rewards):
    returns = discounted_returns(rewards)
    advantages = (returns - values).detach()
    policy_loss = -(log_probs * advantages).mean()
    value_loss = F.mse_loss(values, returns)
    return policy_loss + 0.5 * value_loss


if __name__ == "__main__":
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    log_probs, values, rewards = rollout(model, torch.Generator().manual_seed(1))

    optimizer.zero_grad()
    a2c_loss(log_probs, values, rewards).backward(retain_graph=True)
    got = [p.grad.clone() for p in model.critic.parameters()]

    # reference: the critic is trained by the value loss only
    returns = discounted_returns(rewards)
    ref = torch.autograd.grad(0.5 * F.mse_loss(values, returns), list(model.critic.parameters()))
    optimizer.step()
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: critic gradient polluted by the policy loss")

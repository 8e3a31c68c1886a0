# source: SAC / SVG actor code that builds the policy as a MultivariateNormal (scale_tril from a learned log-std) and draws the action with .sample() before scoring it with the critic (forum threads "SAC actor loss not decreasing", "actor gets no gradient from Q"): sample() is not reparameterised, so the critic's value never reaches the actor; only the entropy term trains it
# family: H
# expect: ok
# verify: the critic term's gradient on the actor's mean layer is asked for with allow_unused
# line: 31
# fix: (fixed version of H138_sac_actor_draws_multivariate_normal_actions_with_sample_before_the_critic.py) draw a reparameterised action: act = dist.rsample()
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self, d_obs=5, d_act=2):
        super().__init__()
        self.mu = nn.Linear(d_obs, d_act)
        self.log_std = nn.Parameter(torch.zeros(d_act))

    def forward(self, obs):
        scale = torch.diag_embed(self.log_std.exp().expand(obs.size(0), -1))
        return MultivariateNormal(self.mu(obs), scale_tril=scale)


if __name__ == "__main__":
    actor = Actor()
    critic = nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    obs = torch.randn(8, 5)
    dist = actor(obs)
    act = dist.rsample()
    q = critic(torch.cat([obs, act], dim=-1)).squeeze(-1)
    g = torch.autograd.grad(q.mean(), actor.mu.weight, retain_graph=True, allow_unused=True)[0]
    loss = (0.2 * dist.log_prob(act) - q).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("MISMATCH: the critic's value never reaches the actor" if g is None else "MATCH")

# source: SAC with automatic entropy tuning (CleanRL / spinning-up style): alpha = log_alpha.exp() enters the actor loss, and the temperature optimizer is stepped (log_alpha updated in place) before actor_loss.backward()
# family: G
# expect: ok
# line: 53  (backward: 56)
# fix: none needed - the actor loss uses alpha = log_alpha.exp(), and ExpBackward saves its output (alpha), not log_alpha; the in-place Adam update of log_alpha touches no tensor the actor graph saved, so the actor gradient is the one of the loss that was computed
import torch
import torch.nn as nn

torch.manual_seed(0)
OBS, ACT = 4, 2


class GaussianActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU(), nn.Linear(32, 2 * ACT))

    def forward(self, obs):
        mu, log_std = self.net(obs).chunk(2, dim=-1)
        dist = torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())
        u = dist.rsample()
        a = torch.tanh(u)
        return a, (dist.log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)).sum(-1)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], -1)).squeeze(-1)


if __name__ == "__main__":
    actor, critic = GaussianActor(), Critic()
    log_alpha = torch.zeros(1, requires_grad=True)
    target_entropy = -float(ACT)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    alpha_opt = torch.optim.Adam([log_alpha], lr=0.1)
    obs = torch.randn(32, OBS)

    ok = True
    for it in range(3):
        new_act, logp = actor(obs)
        alpha = log_alpha.exp()
        actor_loss = (alpha * logp - critic(obs, new_act)).mean()
        alpha_loss = -(log_alpha * (logp + target_entropy).detach()).mean()
        ref = torch.autograd.grad(actor_loss, list(actor.parameters()), retain_graph=True)

        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()

        actor_opt.zero_grad()
        actor_loss.backward()
        ok &= all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(actor.parameters(), ref))
        actor_opt.step()
    print("MATCH alpha=%.4f" % log_alpha.exp().item() if ok else "MISMATCH")

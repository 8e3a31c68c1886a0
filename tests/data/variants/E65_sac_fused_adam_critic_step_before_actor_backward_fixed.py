# source: (fixed version of E65_sac_fused_adam_critic_step_before_actor_backward.py) SAC implementations that compute the actor loss from the same Q forward before the critic update (actor_loss built at the top of update()), then step the critics and backpropagate the actor loss; with Adam(fused=True) (chosen for speed) the critic step does not bump the version counter, so no error is raised and the policy gradient silently uses the updated critics
# family: E
# expect: ok
# line: 64  (backward: 67)
# fix: update the critics first and only then build the actor loss from a fresh Q forward (or backprop the actor loss before critic_opt.step())
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
OBS, ACT, GAMMA, ALPHA = 5, 2, 0.99, 0.2


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=-1)).squeeze(-1)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 64), nn.ReLU())
        self.mu = nn.Linear(64, ACT)
        self.log_std = nn.Linear(64, ACT)

    def sample(self, obs):
        h = self.body(obs)
        mu, log_std = self.mu(h), self.log_std(h).clamp(-5, 2)
        normal = torch.distributions.Normal(mu, log_std.exp())
        u = normal.rsample()
        a = torch.tanh(u)
        logp = (normal.log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)).sum(-1)
        return a, logp


class SAC:
    def __init__(self):
        self.actor = Actor()
        self.q1, self.q2 = QNet(), QNet()
        self.q1_targ, self.q2_targ = copy.deepcopy(self.q1), copy.deepcopy(self.q2)
        q_params = list(self.q1.parameters()) + list(self.q2.parameters())
        self.critic_opt = torch.optim.Adam(q_params, lr=3e-3, fused=True)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4, fused=True)

    def update(self, obs, act, rew, next_obs, done):
        with torch.no_grad():
            next_a, next_logp = self.actor.sample(next_obs)
            q_next = torch.min(self.q1_targ(next_obs, next_a), self.q2_targ(next_obs, next_a))
            target = rew + GAMMA * (1 - done) * (q_next - ALPHA * next_logp)
        critic_loss = F.mse_loss(self.q1(obs, act), target) + F.mse_loss(self.q2(obs, act), target)

        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        new_act, logp = self.actor.sample(obs)
        q_pi = torch.min(self.q1(obs, new_act), self.q2(obs, new_act))
        actor_loss = (ALPHA * logp - q_pi).mean()
        ref = torch.autograd.grad(actor_loss, list(self.actor.parameters()), retain_graph=True)

        self.actor_opt.zero_grad()
        actor_loss.backward()
        got = [p.grad.clone() for p in self.actor.parameters()]
        self.actor_opt.step()
        return got, ref


if __name__ == "__main__":
    agent = SAC()
    B = 64
    batch = (torch.randn(B, OBS), torch.rand(B, ACT) * 2 - 1, torch.randn(B), torch.randn(B, OBS), torch.zeros(B))
    got, ref = agent.update(*batch)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: actor gradient computed through the updated critics")

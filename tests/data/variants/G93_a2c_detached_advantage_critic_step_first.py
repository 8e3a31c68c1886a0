# source: A2C / PPO-style updates with separate actor and critic networks and optimizers (e.g. pytorch-a2c-ppo style "separate networks" configs): the critic is updated first and the policy loss, built from advantages computed before the critic step, is backpropagated afterwards
# family: G
# expect: ok
# line: 46  (backward: 49)
# fix: none needed - the advantages are detached, so the policy-loss graph contains only actor weights; critic_opt.step() rewrites critic weights that no pending graph saved
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
OBS, ACT, GAMMA, LAM = 8, 4, 0.99, 0.95


def gae(rewards, values, last_value, dones):
    adv, running = torch.zeros_like(rewards), 0.0
    values = torch.cat([values, last_value.view(1)])
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + GAMMA * values[t + 1] * (1 - dones[t]) - values[t]
        running = delta + GAMMA * LAM * (1 - dones[t]) * running
        adv[t] = running
    return adv


actor = nn.Sequential(nn.Linear(OBS, 64), nn.Tanh(), nn.Linear(64, ACT))
critic = nn.Sequential(nn.Linear(OBS, 64), nn.Tanh(), nn.Linear(64, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=7e-4)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)

ok = True
for update in range(3):
    obs, next_obs = torch.randn(20, OBS), torch.randn(OBS)
    rewards, dones = torch.randn(20), (torch.rand(20) < 0.1).float()
    dist = torch.distributions.Categorical(logits=actor(obs))
    actions = dist.sample()
    values = critic(obs).squeeze(-1)
    with torch.no_grad():
        advantages = gae(rewards, values.detach(), critic(next_obs), dones)
    returns = advantages + values.detach()

    policy_loss = -(dist.log_prob(actions) * advantages).mean() - 0.01 * dist.entropy().mean()
    value_loss = F.mse_loss(values, returns)
    ref = torch.autograd.grad(policy_loss, list(actor.parameters()), retain_graph=True)

    critic_opt.zero_grad()
    value_loss.backward()
    critic_opt.step()

    actor_opt.zero_grad()
    policy_loss.backward()
    ok &= all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(actor.parameters(), ref))
    actor_opt.step()
print("MATCH" if ok else "MISMATCH")

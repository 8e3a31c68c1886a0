# source: advantage actor-critic loops in the style of the PyTorch examples (examples/reinforcement_learning/actor_critic.py) and forum reports of a critic loss that never decreases: the bootstrapped targets are computed under torch.no_grad() and the value loss is written inside the same block, so the critic never gets a gradient while the actor trains
# family: H
# expect: silent
# verify: the critic's .grad after the combined backward: None means the value head never trains
# line: 27
# fix: compute the value loss with gradients enabled (outside the no_grad block): value_loss = F.mse_loss(critic(obs).squeeze(-1), returns)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

obs_dim, n_actions, gamma = 4, 3, 0.99
actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, n_actions))
critic = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=3e-4)

for update in range(3):
    obs, next_obs = torch.randn(8, obs_dim), torch.randn(8, obs_dim)
    rewards, dones = torch.randn(8), torch.zeros(8)
    dist = torch.distributions.Categorical(logits=actor(obs))
    actions = dist.sample()
    with torch.no_grad():
        returns = rewards + gamma * (1 - dones) * critic(next_obs).squeeze(-1)
        values = critic(obs).squeeze(-1)
        advantages = returns - values
        value_loss = F.mse_loss(values, returns)
    policy_loss = -(dist.log_prob(actions) * advantages).mean()
    loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("update", update, "policy %.4f value %.4f" % (policy_loss.item(), value_loss.item()))

missing = [n for n, p in critic.named_parameters() if p.grad is None]
print("MISMATCH: the critic got no gradient: " + ", ".join(missing) if missing else "MATCH")

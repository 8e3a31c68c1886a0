# source: https://github.com/nikhilbarhate99/PPO-PyTorch/issues/18 (old log-probs and state values are taken from the rollout memory without a graph; advantages computed once from them are reused by every one of the K epochs)
# family: G
# expect: ok
# line: 32
# fix: none needed - the advantages are built from values evaluated under torch.no_grad(), so reusing them in every epoch is fine
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def evaluate(self, states, actions):
        dist = Categorical(logits=self.actor(states))
        return dist.log_prob(actions), self.critic(states).squeeze(-1), dist.entropy()


def rollout_advantages(policy, states, rewards, gamma=0.99):
    returns, running = [], 0.0
    for r in reversed(rewards.tolist()):
        running = r + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    with torch.no_grad():
        values = policy.critic(states).squeeze(-1)
    return returns, returns - values


if __name__ == "__main__":
    policy = ActorCritic()
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    states, rewards = torch.randn(20, 4), torch.randn(20)
    with torch.no_grad():
        dist = Categorical(logits=policy.actor(states))
        actions = dist.sample()
        old_logprobs = dist.log_prob(actions)
    returns, advantages = rollout_advantages(policy, states, rewards)
    for epoch in range(4):
        logprobs, values, entropy = policy.evaluate(states, actions)
        ratios = torch.exp(logprobs - old_logprobs.detach())
        surr = torch.min(ratios * advantages, torch.clamp(ratios, 0.8, 1.2) * advantages)
        loss = -surr.mean() + 0.5 * (values - returns).pow(2).mean() - 0.01 * entropy.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("epoch", epoch, "loss", loss.item())

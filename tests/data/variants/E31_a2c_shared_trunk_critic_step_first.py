# source: actor-critic with a shared trunk and two optimizers: value_loss.backward(retain_graph=True); critic_opt.step() (which also owns the trunk) before policy_loss.backward()
# family: E
# expect: error
# line: 33  (backward: 36)
# fix: run both backward passes before any step (move critic_opt.step() after policy_loss.backward())
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


class SharedActorCritic(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.policy(h), self.value(h).squeeze(-1)


def update(model, actor_opt, critic_opt, obs, actions, returns):
    logits, values = model(obs)
    advantage = returns - values
    value_loss = advantage.pow(2).mean()
    policy_loss = -(Categorical(logits=logits).log_prob(actions) * advantage.detach()).mean()

    critic_opt.zero_grad()
    value_loss.backward(retain_graph=True)
    critic_opt.step()

    actor_opt.zero_grad()
    policy_loss.backward()
    actor_opt.step()
    return value_loss.item(), policy_loss.item()


if __name__ == "__main__":
    model = SharedActorCritic()
    critic_opt = torch.optim.Adam(list(model.trunk.parameters()) + list(model.value.parameters()), lr=1e-3)
    actor_opt = torch.optim.Adam(model.policy.parameters(), lr=1e-3)
    obs, actions, returns = torch.randn(16, 8), torch.randint(0, 4, (16,)), torch.randn(16)
    print(update(model, actor_opt, critic_opt, obs, actions, returns))

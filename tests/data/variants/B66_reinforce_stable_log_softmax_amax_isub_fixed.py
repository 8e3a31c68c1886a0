# source: REINFORCE / policy-gradient code with a numpy-style "stable" log-softmax (logits -= logits.max(axis=-1, keepdims=True)) ported with torch.amax; AmaxBackward saves its input, which the in-place subtraction then rewrites
# family: B
# expect: ok
# line: 13  (backward: 53)
# fix: (fixed version of B66_reinforce_stable_log_softmax_amax_isub.py) subtract out-of-place: logits = logits - logits.amax(dim=-1, keepdim=True)
import torch
import torch.nn as nn

torch.manual_seed(0)


def stable_log_softmax(logits):
    logits = logits - logits.amax(dim=-1, keepdim=True)
    return logits - logits.exp().sum(dim=-1, keepdim=True).log()


class Policy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))

    def forward(self, obs):
        return stable_log_softmax(self.net(obs))


def discounted_returns(rewards, gamma=0.99):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return torch.tensor(out[::-1])


def run_episode(policy, steps=8):
    log_probs, rewards = [], []
    obs = torch.randn(4)
    for _ in range(steps):
        logp = policy(obs)
        action = torch.multinomial(logp.exp(), 1).item()
        log_probs.append(logp[action])
        rewards.append(1.0 if action == 0 else 0.0)
        obs = torch.randn(4)
    return torch.stack(log_probs), discounted_returns(rewards)


if __name__ == "__main__":
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    log_probs, returns = run_episode(policy)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = -(log_probs * returns).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("pg loss", round(loss.item(), 4))

# source: actor-critic / REINFORCE code with the numpy-style stable softmax `logits -= logits.max(dim=-1, keepdim=True)[0]` before exp / normalisation
# family: G
# expect: ok
# line: 23
# fix: none needed - max over a dimension saves only the argmax indices (not its input), and the logits are a Linear output that no backward saved, so subtracting in place is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        logits = self.pi(h)
        logits -= logits.max(dim=-1, keepdim=True)[0]
        probs = logits.exp()
        probs = probs / probs.sum(dim=-1, keepdim=True)
        return probs, self.v(h).squeeze(-1)


if __name__ == "__main__":
    model = ActorCritic()
    obs = torch.randn(16, 4)
    actions = torch.randint(0, 3, (16,))
    returns = torch.randn(16)
    probs, values = model(obs)
    adv = (returns - values).detach()
    loss = -(torch.log(probs.gather(1, actions[:, None]).squeeze(1)) * adv).mean() + F.mse_loss(values, returns)
    loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    h = model.body(obs)
    ref_probs = F.softmax(model.pi(h), dim=-1)
    ref_values = model.v(h).squeeze(-1)
    ref_adv = (returns - ref_values).detach()
    ref_loss = -(torch.log(ref_probs.gather(1, actions[:, None]).squeeze(1)) * ref_adv).mean() + F.mse_loss(ref_values, returns)
    ref_loss.backward()
    ok = all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(got, model.parameters()))
    print("gradients match" if ok else "MISMATCH")

# source: NoisyNet DQN (Fortunato et al.; Rainbow implementations such as Kaixhin/Rainbow, whose NoisyLinear uses only the mean weights in eval mode): an evaluation helper switches the agent to eval() and its 'restore' reads the flag after the switch, so training continues without noise and the sigma parameters never get a gradient
# family: H
# expect: ok
# verify: the noise-scale parameters' .grad after training steps: None means they never train
# line: 32
# fix: (fixed version of H72_noisy_dqn_left_in_eval_by_greedy_evaluation.py) restore the mode saved before the switch: agent.train(was_training)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoisyLinear(nn.Module):
    def __init__(self, n_in, n_out, sigma0=0.5):
        super().__init__()
        self.mu_w = nn.Parameter(torch.randn(n_out, n_in) / n_in ** 0.5)
        self.sigma_w = nn.Parameter(torch.full((n_out, n_in), sigma0 / n_in ** 0.5))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        if self.training:
            return F.linear(x, self.mu_w + self.sigma_w * torch.randn_like(self.sigma_w), self.bias)
        return F.linear(x, self.mu_w, self.bias)


def greedy_return(agent, obs):
    was_training = agent.training
    agent.eval()
    with torch.no_grad():
        score = agent(obs).max(dim=1).values.mean().item()
    agent.train(was_training)
    return score


if __name__ == "__main__":
    q_net = nn.Sequential(NoisyLinear(4, 32), nn.ReLU(), NoisyLinear(32, 2))
    opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
    print("greedy return before training %.3f" % greedy_return(q_net, torch.randn(16, 4)))
    for step in range(5):
        obs, actions, targets = torch.randn(16, 4), torch.randint(0, 2, (16,)), torch.randn(16)
        q = q_net(obs).gather(1, actions[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    sigmas = [n for n, p in q_net.named_parameters() if "sigma" in n and p.grad is None]
    print("MISMATCH: noise scales never trained: " + ", ".join(sigmas) if sigmas else "MATCH")

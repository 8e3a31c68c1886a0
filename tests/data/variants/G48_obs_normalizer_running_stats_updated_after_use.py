# source: RL observation normalisers (RunningMeanStd in stable-baselines / CleanRL style) whose running mean/var buffers are updated in place after the normalised observation was fed to the policy
# family: G
# expect: ok
# line: 28, 30  (backward: 44)
# fix: none needed - the running statistics are buffers without grad, subtraction saves nothing, and the division saves the divisor sqrt(var + eps), a fresh tensor; the in-place update of mean/var therefore touches nothing a backward needs
import torch
import torch.nn as nn

torch.manual_seed(0)


class RunningNorm(nn.Module):
    def __init__(self, dim, eps=1e-8):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(1e-4))
        self.eps = eps

    def forward(self, x):
        return (x - self.mean) / torch.sqrt(self.var + self.eps)

    @torch.no_grad()
    def update(self, x):
        batch_mean, batch_var, n = x.mean(0), x.var(0, unbiased=False), x.size(0)
        delta = batch_mean - self.mean
        tot = self.count + n
        self.mean += delta * n / tot
        m2 = self.var * self.count + batch_var * n + delta.pow(2) * self.count * n / tot
        self.var.copy_(m2 / tot)
        self.count.fill_(tot)


if __name__ == "__main__":
    norm = RunningNorm(5)
    policy = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    for _ in range(2):
        obs = 3 * torch.randn(8, 5) + 1
        out = policy(norm(obs))
        norm.update(obs)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())

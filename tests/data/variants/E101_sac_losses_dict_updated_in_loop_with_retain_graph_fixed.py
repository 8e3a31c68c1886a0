# source: https://github.com/microsoft/oac-explore/issues/27 (SAC trainer: the policy loss is built from the Q networks before the Q optimizers step; with newer PyTorch the policy backward fails with "modified by an inplace operation"; fix: update the policy before the critics, or build its loss after them)
# family: E
# expect: ok
# line: 62, 66  (backward: 65)
# fix: (fixed version of E101_sac_losses_dict_updated_in_loop_with_retain_graph.py) step the policy before the Q networks (or compute the policy loss after the critic updates): for name in ("policy", "qf1", "qf2")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT = 6, 2


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=-1)).squeeze(-1)


class TanhGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU())
        self.mu, self.log_std = nn.Linear(32, ACT), nn.Linear(32, ACT)

    def sample(self, obs):
        h = self.body(obs)
        std = self.log_std(h).clamp(-5, 2).exp()
        normal = torch.distributions.Normal(self.mu(h), std)
        pre = normal.rsample()
        act = torch.tanh(pre)
        log_pi = (normal.log_prob(pre) - torch.log(1 - act.pow(2) + 1e-6)).sum(-1)
        return act, log_pi


class SACTrainer:
    def __init__(self, gamma=0.99, alpha=0.2):
        self.policy, self.qf1, self.qf2 = TanhGaussianPolicy(), QNet(), QNet()
        self.target_qf1, self.target_qf2 = QNet(), QNet()
        self.optimizers = {name: torch.optim.Adam(getattr(self, name).parameters(), lr=3e-4)
                           for name in ("policy", "qf1", "qf2")}
        self.gamma, self.alpha = gamma, alpha

    def compute_losses(self, obs, act, rew, next_obs, done):
        new_act, log_pi = self.policy.sample(obs)
        q_new = torch.min(self.qf1(obs, new_act), self.qf2(obs, new_act))
        policy_loss = (self.alpha * log_pi - q_new).mean()
        with torch.no_grad():
            next_act, next_log_pi = self.policy.sample(next_obs)
            target_q = torch.min(self.target_qf1(next_obs, next_act), self.target_qf2(next_obs, next_act))
            q_target = rew + self.gamma * (1 - done) * (target_q - self.alpha * next_log_pi)
        return {"qf1": F.mse_loss(self.qf1(obs, act), q_target),
                "qf2": F.mse_loss(self.qf2(obs, act), q_target),
                "policy": policy_loss}

    def train_from_torch(self, batch):
        losses = self.compute_losses(*batch)
        for name in ("policy", "qf1", "qf2"):
            optimizer = self.optimizers[name]
            optimizer.zero_grad()
            losses[name].backward(retain_graph=True)
            optimizer.step()
        return {k: v.item() for k, v in losses.items()}


if __name__ == "__main__":
    trainer = SACTrainer()
    for it in range(2):
        batch = (torch.randn(16, OBS), torch.rand(16, ACT) * 2 - 1, torch.randn(16),
                 torch.randn(16, OBS), (torch.rand(16) < 0.1).float())
        print("iter", it, trainer.train_from_torch(batch))

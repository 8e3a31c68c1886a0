import torch

from utils.returns import compute_gae

from .models import ActorCritic


class PPOAgent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.net = ActorCritic(cfg["env"]["obs_dim"], cfg["env"]["n_actions"])
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg["ppo"]["lr"])

    def update(self, obs, actions, old_logp, rewards, values):
        adv, returns = compute_gae(rewards, values, self.cfg["ppo"]["gamma"], self.cfg["ppo"]["lam"])
        for _ in range(self.cfg["ppo"]["epochs"]):
            dist, v = self.net(obs)
            ratio = (dist.log_prob(actions) - old_logp).exp()
            clip = self.cfg["ppo"]["clip"]
            policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
            value_loss = (returns - v).pow(2).mean()
            self.opt.zero_grad()
            policy_loss.backward(retain_graph=True)
            (self.cfg["ppo"]["vf_coef"] * value_loss).backward()
            self.opt.step()

import torch

from cfg import load
from hooks import install_hooks
from models import Policy


def main():
    torch.manual_seed(0)
    cfg = load()
    policy = Policy(cfg)
    install_hooks(policy, cfg.options["clip"])
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    obs = torch.randn(8, cfg.dim)
    for _ in range(2):
        loss = policy(obs).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

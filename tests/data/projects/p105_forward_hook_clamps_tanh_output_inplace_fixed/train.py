import torch

from hooks import install_hooks
from models.policy import Policy


def main():
    torch.manual_seed(0)
    policy = Policy()
    install_hooks(policy)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    obs = torch.randn(8, 4)
    for _ in range(2):
        loss = policy(obs).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

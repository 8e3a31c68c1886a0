import torch

from model import Policy


def main():
    torch.manual_seed(0)
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    for _ in range(3):
        obs = torch.randn(10, 6)
        probs = policy(obs)
        actions = torch.multinomial(probs, 1).squeeze(1)
        returns = torch.randn(10)
        logp = torch.log(probs.gather(1, actions[:, None]).squeeze(1))
        loss = -(logp * returns).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()

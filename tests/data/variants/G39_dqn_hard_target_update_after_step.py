# source: DQN training loops that copy the online weights into the target network every N steps with target_net.load_state_dict(policy_net.state_dict())
# family: G
# expect: ok
# line: 31  (backward: 28)
# fix: none needed - the target values are computed under torch.no_grad(), and load_state_dict (an in-place copy into the target's parameters) runs after backward/step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_net():
    return nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))


if __name__ == "__main__":
    policy_net, target_net = make_net(), make_net()
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)
    for step in range(4):
        s, a, r, s2 = torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8), torch.randn(8, 4)
        q = policy_net(s).gather(1, a[:, None]).squeeze(1)
        with torch.no_grad():
            target = r + 0.99 * target_net(s2).max(1).values
        loss = F.mse_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 2 == 1:
            target_net.load_state_dict(policy_net.state_dict())
    print("loss", loss.item())

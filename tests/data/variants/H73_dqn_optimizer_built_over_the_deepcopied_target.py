# source: the PyTorch DQN tutorial layout (policy_net, target_net, optimizer) with the mix-up users report as "DQN loss not decreasing": the target network is made with copy.deepcopy(policy_net) and the optimizer built over target_net.parameters(), so the online network is never updated
# family: H
# expect: silent
# verify: the online network's weights are compared before and after the optimizer steps; the optimizer's own parameters' .grad is printed
# line: 17
# fix: build the optimizer over the online network: torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

policy_net = nn.Sequential(nn.Linear(4, 24), nn.ReLU(), nn.Linear(24, 2))
target_net = copy.deepcopy(policy_net)
target_net.eval()
optimizer = torch.optim.RMSprop(target_net.parameters(), lr=1e-3)
before = [p.detach().clone() for p in policy_net.parameters()]

gamma = 0.99
for step in range(5):
    state, next_state = torch.randn(32, 4), torch.randn(32, 4)
    action, reward = torch.randint(0, 2, (32, 1)), torch.randn(32)
    q = policy_net(state).gather(1, action).squeeze(1)
    with torch.no_grad():
        target = reward + gamma * target_net(next_state).max(1).values
    loss = F.smooth_l1_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "loss %.4f" % loss.item())

moved = any(not torch.equal(b, p) for b, p in zip(before, policy_net.parameters()))
print("MATCH" if moved else "MISMATCH: the online network never changed; optimizer grads: "
      + str([p.grad is None for g in optimizer.param_groups for p in g["params"]]))

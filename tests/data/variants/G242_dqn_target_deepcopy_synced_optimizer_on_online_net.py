# source: the PyTorch DQN tutorial (target_net loaded from policy_net, the optimizer built over policy_net.parameters(), the target synced with load_state_dict)
# family: G
# expect: ok
# line: 15
# fix: none needed - the frozen deepcopy is the target; the optimizer holds the online network
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

policy_net = nn.Sequential(nn.Linear(4, 24), nn.ReLU(), nn.Linear(24, 2))
optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)
target_net = copy.deepcopy(policy_net).requires_grad_(False)
before = [p.detach().clone() for p in policy_net.parameters()]

for step in range(6):
    state, next_state = torch.randn(32, 4), torch.randn(32, 4)
    action, reward = torch.randint(0, 2, (32, 1)), torch.randn(32)
    q = policy_net(state).gather(1, action).squeeze(1)
    target = reward + 0.99 * target_net(next_state).max(1).values
    loss = F.smooth_l1_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 3 == 2:
        target_net.load_state_dict(policy_net.state_dict())

moved = all(not torch.equal(b, p) for b, p in zip(before, policy_net.parameters()))
print("MATCH" if moved else "MISMATCH: the online network did not change")

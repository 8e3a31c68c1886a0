# fix-kind: drop_detach
# why: a target network's output is detached on purpose (a TD target); dropping the detach
#      would train the target through the loss.
import torch
import torch.nn as nn

torch.manual_seed(0)
q = nn.Linear(4, 2)
q_target = nn.Linear(4, 2)
q_target.load_state_dict(q.state_dict())
opt = torch.optim.SGD(q.parameters(), lr=0.1)
for step in range(3):
    s, s2, r = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6)
    target = (r + 0.9 * q_target(s2).max(1).values).detach()
    loss = nn.functional.mse_loss(q(s).max(1).values, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{step} {loss.item():.6f} {q_target.weight.grad is None}")

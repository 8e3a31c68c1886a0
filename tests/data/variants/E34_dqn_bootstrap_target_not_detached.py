# source: DQN implementations without a separate target network that build the TD target from the online network without no_grad()/detach() (the target then receives gradient: not a semi-gradient update)
# family: E
# expect: silent
# verify: next_q comes from the online network with its graph, so the loss also differentiates through the bootstrap target; the parameter gradient is compared with the semi-gradient (detached target) and MISMATCH is printed
# line: 20  (backward: 31)
# fix: build the target without a graph: next_q = policy_net(next_states).max(1).values.detach() (or compute it under torch.no_grad())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def td_loss(policy_net, batch, gamma=0.99, detach_target=False):
    states, actions, rewards, next_states, dones = batch
    q = policy_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
    if detach_target:
        next_q = policy_net(next_states).max(1).values.detach()
    else:
        next_q = policy_net(next_states).max(1).values
    target = rewards + gamma * next_q * (1 - dones)
    return F.smooth_l1_loss(q, target)


if __name__ == "__main__":
    policy_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    batch = (torch.randn(16, 4), torch.randint(0, 2, (16,)), torch.randn(16), torch.randn(16, 4),
             (torch.rand(16) < 0.1).float())
    loss = td_loss(policy_net, batch)
    policy_net.zero_grad()
    loss.backward()
    got = [p.grad.clone() for p in policy_net.parameters()]
    ref = torch.autograd.grad(td_loss(policy_net, batch, detach_target=True), list(policy_net.parameters()))
    ok = all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: gradient also flows through the bootstrap target")

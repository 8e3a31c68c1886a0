# source: pytorch/tutorials reinforcement_q_learning.py (next-state values from the target network under torch.no_grad(); the loss is computed on the policy network's Q values)
# family: G
# expect: ok
# line: 24
# fix: none needed - only the target is computed without grad; the loss keeps the policy network's graph
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    policy_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    target_net = copy.deepcopy(policy_net)
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
    criterion = nn.SmoothL1Loss()
    for step in range(3):
        state, action = torch.randn(16, 4), torch.randint(0, 2, (16, 1))
        reward, next_state = torch.randn(16), torch.randn(16, 4)
        state_action_values = policy_net(state).gather(1, action)
        with torch.no_grad():
            next_state_values = target_net(next_state).max(1).values
        expected = reward + 0.99 * next_state_values
        loss = criterion(state_action_values, expected.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        print("step", step, "loss", loss.item())

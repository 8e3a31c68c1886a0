# source: the "parameters not updating after reassigning nn.Parameter" pattern of forum reports: a helper resets a layer from a snapshot with layer.weight = nn.Parameter(snapshot) after the optimizer was built; the model now uses a new leaf the optimizer does not hold, and the optimizer's tensor never gets a gradient
# family: H
# expect: ok
# verify: the weight the optimizer holds: its .grad after the backward is None
# line: 15
# fix: (fixed version of H81_policy_weights_snapshot_rewrapped_as_parameter.py) copy the snapshot into the existing parameter (layer.weight.data.copy_(snapshot)) so the optimizer keeps the tensor the model uses
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def restore_layer(layer, snapshot):
    layer.weight.data.copy_(snapshot)


if __name__ == "__main__":
    policy = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    held = optimizer.param_groups[0]["params"][0]
    snapshot = policy[0].weight.detach().clone()
    for episode in range(4):
        if episode == 2:
            restore_layer(policy[0], snapshot)
        obs, actions, returns = torch.randn(10, 6), torch.randint(0, 3, (10,)), torch.randn(10)
        logp = F.log_softmax(policy(obs), dim=-1).gather(1, actions[:, None]).squeeze(1)
        loss = -(logp * returns).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("MATCH" if held.grad is not None else "MISMATCH: the first layer's weight held by the optimizer got no gradient")

# source: https://github.com/pytorch/pytorch/issues/34535 ("Traning DQN, element 0 of tensors does not require grad and does not have a grad_fn") and forum answers on collecting per-chunk losses in a list and averaging them with torch.tensor(losses).mean(): torch.tensor copies the values and drops the graph
# family: H
# expect: ok
# line: 17  (backward: 27)
# fix: (fixed version of H04_micro_batch_losses_rewrapped_with_torch_tensor.py) combine the loss tensors with torch.stack(losses).mean() (or sum them directly)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def chunked_loss(model, x, y, chunks=4):
    losses = []
    for xc, yc in zip(x.chunk(chunks), y.chunk(chunks)):
        losses.append(F.smooth_l1_loss(model(xc).squeeze(-1), yc))
    return torch.stack(losses).mean()


if __name__ == "__main__":
    q_net = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = torch.optim.RMSprop(q_net.parameters(), lr=1e-3)
    for step in range(2):
        states, targets = torch.randn(32, 6), torch.randn(32)
        loss = chunked_loss(q_net, states, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())

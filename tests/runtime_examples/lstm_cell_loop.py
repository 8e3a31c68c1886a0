"""time_sequence_prediction in small: an nn.LSTMCell unrolled over time (correct code)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.LSTMCell(3, 8)
head = nn.Linear(8, 1)
x = torch.randn(4, 10, 3)
h = torch.zeros(4, 8)
c = torch.zeros(4, 8)
outputs = []
for t in range(x.size(1)):
    h, c = cell(x[:, t], (h, c))
    outputs.append(head(h))
loss = torch.stack(outputs, 1).pow(2).mean()
loss.backward()
print("loss %.8f" % loss.item())
for name, p in list(cell.named_parameters()) + list(head.named_parameters()):
    print("%s %.8f" % (name, p.grad.abs().sum().item()))

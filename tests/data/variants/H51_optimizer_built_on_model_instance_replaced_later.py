# source: https://github.com/spro/practical-pytorch/issues/9 (char-rnn-classification with optimizer.step(): "I have the model instantiated twice - once directly after the RNN class, and once before the main for epoch loop ... Try moving the optimizer to below the second one, so the params aren't reset")
# family: H
# expect: silent
# verify: the parameters of the network that computes the loss are compared before and after training
# line: 46, 63  (backward: 55)
# fix: build the optimizer over the network that is trained: move optimizer = torch.optim.SGD(rnn.parameters(), ...) below the second rnn = RNN(...)
import string

import torch
import torch.nn as nn

torch.manual_seed(0)

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
categories = ["English", "French", "Italian"]
n_categories = len(categories)


def line_to_tensor(line):
    t = torch.zeros(len(line), 1, n_letters)
    for i, ch in enumerate(line):
        t[i][0][all_letters.find(ch)] = 1
    return t


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, x, hidden):
        combined = torch.cat((x, hidden), 1)
        return self.softmax(self.i2o(combined)), self.i2h(combined)

    def init_hidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.005)


def train(category_tensor, line_tensor):
    hidden = rnn.init_hidden()
    optimizer.zero_grad()
    for i in range(line_tensor.size(0)):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    optimizer.step()
    return output, loss.item()


data = [("Smith", 0), ("Dubois", 1), ("Rossi", 2), ("Jones", 0), ("Moreau", 1), ("Bianchi", 2)]

n_hidden = 16
rnn = RNN(n_letters, n_hidden, n_categories)
before = [p.detach().clone() for p in rnn.parameters()]
for epoch in range(3):
    total = 0.0
    for name, label in data:
        _, loss = train(torch.tensor([label]), line_to_tensor(name))
        total += loss
    print("epoch", epoch, "loss", round(total / len(data), 4))

moved = [not torch.equal(b, p.detach()) for b, p in zip(before, rnn.parameters())]
print("MATCH" if all(moved) else "MISMATCH: the trained network never moved; the optimizer holds another instance's parameters")

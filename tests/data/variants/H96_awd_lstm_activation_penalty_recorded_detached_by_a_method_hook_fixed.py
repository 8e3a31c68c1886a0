# source: activation regularization (AR) as in AWD-LSTM, re-implemented with forward hooks (forum threads on "regularizing hidden activations with hooks"): the recorder's hook is a bound method that appends output.detach(), so the penalty built from the recorded activations is a constant and the layers it should regularize get nothing from it
# family: H
# expect: ok
# verify: the model is trained from the same seed with the penalty weight at 0 and at 2 and the first layer's weights are compared
# line: 18
# fix: (fixed version of H96_awd_lstm_activation_penalty_recorded_detached_by_a_method_hook.py) record the activations with their graph: self.acts.append(output)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActivationRecorder:
    def __init__(self, module):
        self.acts = []
        module.register_forward_hook(self.record)

    def record(self, module, inputs, output):
        self.acts.append(output)

    def penalty(self):
        total = sum(a.pow(2).mean() for a in self.acts)
        self.acts.clear()
        return total


def train(alpha, steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 3))
    recorders = [ActivationRecorder(model[1]), ActivationRecorder(model[3])]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(model(x), y)
        loss = loss + alpha * sum(r.penalty() for r in recorders)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model[0].weight.detach().clone()


if __name__ == "__main__":
    same = torch.equal(train(0.0), train(2.0))
    print("MISMATCH: the activation penalty never reached the layers" if same else "MATCH")

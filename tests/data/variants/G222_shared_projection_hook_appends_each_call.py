# source: the fix of https://github.com/jmschrei/tangermeme/pull/54 ("Add hook stacks to handle shared modules": push every call's output instead of assigning it) applied to an activation penalty on a projection shared by two towers; the stores are cleared at every step
# family: G
# expect: ok
# line: 19
# fix: none needed - every call of the shared module is kept, so both towers' activations are penalised
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActivationStore:
    def __init__(self, module):
        self.outputs = []
        module.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        self.outputs.append(output)

    def penalty(self, alpha=0.5):
        return alpha * sum(o.pow(2).mean() for o in self.outputs)


if __name__ == "__main__":
    query_in, doc_in = nn.Linear(6, 8), nn.Linear(10, 8)
    proj = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    store = ActivationStore(proj)
    params = [*query_in.parameters(), *doc_in.parameters(), *proj.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3)
    for step in range(3):
        store.outputs.clear()
        q, d = torch.randn(8, 6), torch.randn(8, 10)
        zq, zd = proj(query_in(q)), proj(doc_in(d))
        loss = F.cross_entropy(zq @ zd.t(), torch.arange(8)) + store.penalty()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4), "stored calls", len(store.outputs))

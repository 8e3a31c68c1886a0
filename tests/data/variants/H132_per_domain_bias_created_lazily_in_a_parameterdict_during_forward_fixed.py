# source: multi-domain models that create a per-domain bias the first time a domain name is seen, stored in an nn.ParameterDict inside forward (forum threads "new parameters are not updated by the optimizer"): the optimizer was built before the first forward, so the domain biases get gradients nobody applies
# family: H
# expect: ok
# verify: a domain bias is compared before and after the steps
# line: 18, 22, 23
# fix: (fixed version of H132_per_domain_bias_created_lazily_in_a_parameterdict_during_forward.py) create every domain's bias in __init__ (before the optimizer): self.domain_bias = nn.ParameterDict({k: nn.Parameter(torch.zeros(d)) for k in domains})
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiDomainTagger(nn.Module):
    def __init__(self, domains=("news", "web"), d=5):
        super().__init__()
        self.body = nn.Linear(9, d)
        self.domain_bias = nn.ParameterDict({k: nn.Parameter(torch.zeros(d)) for k in domains})
        self.d = d

    def forward(self, x, domain):
        return self.body(x) + self.domain_bias[domain]


if __name__ == "__main__":
    model = MultiDomainTagger()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = torch.randn(12, 9), torch.randint(0, 5, (12,))
    for step in range(4):
        opt.zero_grad()
        F.cross_entropy(model(x, "news" if step % 2 else "web"), y).backward()
        opt.step()
    moved = model.domain_bias["news"].abs().sum().item() > 0
    print("MATCH" if moved else "MISMATCH: the domain bias never moved")

# source: cosine-similarity classifiers (few-shot, face recognition) whose normalised class prototypes are exposed through a @property that wraps F.normalize in torch.no_grad() to "save memory" (forum threads "prototypes / class centers not updating"): the property returns a value without a graph, so the prototype Parameter never gets a gradient
# family: H
# expect: ok
# verify: the prototypes are compared before and after the steps
# line: 22, 23
# fix: (fixed version of H150_cosine_classifier_normalises_prototypes_under_no_grad_in_a_property.py) normalise with grad enabled: return F.normalize(self.prototypes, dim=1) without the no_grad block
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CosineClassifier(nn.Module):
    def __init__(self, d=8, n=4):
        super().__init__()
        self.encoder = nn.Linear(10, d)
        self.prototypes = nn.Parameter(torch.randn(n, d))

    @property
    def normed_prototypes(self):
        return F.normalize(self.prototypes, dim=1)

    def forward(self, x):
        z = F.normalize(self.encoder(x), dim=1)
        return 10.0 * z @ self.normed_prototypes.t()


if __name__ == "__main__":
    model = CosineClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = torch.randn(20, 10), torch.randint(0, 4, (20,))
    before = model.prototypes.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("MISMATCH: the prototypes never move" if torch.equal(before, model.prototypes) else "MATCH")

# source: linear-probe fine-tuning scripts copied between backbones (forum threads "element 0 of tensors does not require grad" after a freeze loop): every parameter's requires_grad is set to name.startswith("head"), but this model calls its classifier "fc", so nothing requires grad and the backward raises
# family: H
# expect: ok
# line: 25  (backward: 37)
# fix: (fixed version of H113_freeze_by_name_prefix_matches_no_parameter_of_this_model.py) match the classifier's own name: p.requires_grad = name.startswith("fc")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallBackboneClassifier(nn.Module):
    def __init__(self, d=12, n_cls=4):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d, 24), nn.GELU(), nn.Linear(24, 24), nn.GELU())
        self.fc = nn.Linear(24, n_cls)

    def forward(self, x):
        return self.fc(self.features(x))


def prepare_linear_probe(model):
    for name, p in model.named_parameters():
        p.requires_grad = name.startswith("fc")
    return model


if __name__ == "__main__":
    model = prepare_linear_probe(SmallBackboneClassifier())
    opt = torch.optim.SGD(model.fc.parameters(), lr=0.1)
    x = torch.randn(16, 12)
    y = torch.randint(0, 4, (16,))
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())

# source: training scripts whose resume path calls the model factory again (model = build_model(state)) after the optimizer was created over the first model (forum threads "loss not decreasing after resuming", "optimizer not updating the loaded model"): the optimizer steps the parameters of the discarded model; the model that runs is never updated
# family: H
# expect: silent
# verify: the running model's first weight is compared before and after the steps
# line: 35
# fix: load the state into the existing model (model.load_state_dict(state)) or build the optimizer after the model is rebuilt
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def build_model(state=None):
    model = Net()
    if state is not None:
        model.load_state_dict(state)
    return model


if __name__ == "__main__":
    model = build_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    checkpoint = {k: v.clone() for k, v in model.state_dict().items()}
    model = build_model(checkpoint)
    x, y = torch.randn(16, 6), torch.randint(0, 2, (16,))
    before = model.fc1.weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("MISMATCH: the running model never moves" if torch.equal(before, model.fc1.weight) else "MATCH")

# source: contrastive and calibration code that keeps a learnable temperature with self.register_buffer("log_temp", torch.zeros((), requires_grad=True)) so that it follows .to(device) (forum threads "buffer not trained", "temperature parameter does not change"): a buffer is not in parameters(), so the optimizer never holds it although its .grad fills
# family: H
# expect: silent
# verify: the temperature is compared before and after the steps
# line: 18
# fix: self.log_temp = nn.Parameter(torch.zeros(())) (a Parameter also follows .to(device))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TempScaled(nn.Module):
    def __init__(self, d=8, classes=5):
        super().__init__()
        self.fc = nn.Linear(d, classes)
        self.register_buffer("log_temp", torch.zeros((), requires_grad=True))

    def forward(self, x):
        return self.fc(x) / self.log_temp.exp()


if __name__ == "__main__":
    model = TempScaled()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = torch.randn(32, 8), torch.randint(0, 5, (32,))
    before = model.log_temp.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("MISMATCH: the temperature never moves" if torch.equal(before, model.log_temp) else "MATCH")

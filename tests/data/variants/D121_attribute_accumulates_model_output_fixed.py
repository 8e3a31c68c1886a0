# source: trackers and running aggregators that keep a tensor on an object and add the model output into it on every call (`self.out += model(x)`, PyTorch forum "backward through the graph a second time" with a stateful tracker): the attribute carries every earlier iteration's freed graph
# family: D
# expect: ok
# line: 18  (backward: 30)
# fix: (fixed version of D121_attribute_accumulates_model_output.py) truncate the history where the value is kept: self.out = self.out.detach() + self.model(x).sum(0)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Tracker:
    def __init__(self, model):
        self.model = model
        self.out = torch.zeros(2)

    def step(self, x):
        self.out = self.out.detach() + self.model(x).sum(0)
        return self.out


if __name__ == "__main__":
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tracker = Tracker(model)
    for i in range(3):
        y = tracker.step(torch.randn(5, 3))
        loss = y.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("done")

# source: torchvision fine-tuning tutorial pattern (set requires_grad=False on the pretrained backbone, replace the classifier, optimize only the parameters that require grad)
# family: G
# expect: ok
# line: 26
# fix: none needed - the new head's parameters require grad, so the loss has a graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.features(x))


if __name__ == "__main__":
    model = Net()
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(8, 3)
    params_to_update = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params_to_update, lr=0.01, momentum=0.9)
    for step in range(2):
        x, y = torch.rand(4, 3, 8, 8), torch.randint(0, 3, (4,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())

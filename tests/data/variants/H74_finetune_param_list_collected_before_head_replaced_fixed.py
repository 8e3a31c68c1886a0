# source: the transfer-learning recipe of the PyTorch fine-tuning tutorial (freeze the features, replace model.fc for the new classes) in the order users report as "new classifier layer not learning": the list of trainable parameters is collected before model.fc is replaced, so the optimizer holds the old head and the new one never moves
# family: H
# expect: ok
# verify: the new head's weights are compared before and after training
# line: 31
# fix: (fixed version of H74_finetune_param_list_collected_before_head_replaced.py) collect the parameters after the head is replaced: torch.optim.SGD([p for p in model.parameters() if p.requires_grad], ...)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, n_classes)

    def forward(self, x):
        return self.fc(self.features(x))


if __name__ == "__main__":
    model = Classifier(n_classes=10)
    for p in model.features.parameters():
        p.requires_grad = False
    trainable = [p for p in model.parameters() if p.requires_grad]
    model.fc = nn.Linear(8, 4)
    new_head = model.fc.weight.detach().clone()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    for step in range(5):
        images, labels = torch.randn(8, 3, 16, 16), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss %.4f" % loss.item())
    print("MATCH" if not torch.equal(new_head, model.fc.weight) else "MISMATCH: the new head never moved")

# source: loralib / LoRA re-implementations that merge B @ A into the base weight when the module is switched to eval() (train(mode=False) override); loralib writes weight.data and freezes the base weight, ports that fine-tune the base weight too write self.weight += delta
# family: A
# expect: ok
# line: 23
# fix: (fixed version of A63_lora_merge_into_trainable_base_weight.py) do the merge under torch.no_grad() (or on self.weight.data)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Linear):
    def __init__(self, in_features, out_features, r=4, lora_alpha=8):
        super().__init__(in_features, out_features)
        self.lora_A = nn.Parameter(torch.randn(r, in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(out_features, r))
        self.scaling = lora_alpha / r
        self.merged = False

    def merge(self):
        if not self.merged:
            with torch.no_grad():
                self.weight += (self.lora_B @ self.lora_A) * self.scaling
            self.merged = True

    def train(self, mode=True):
        super().train(mode)
        if not mode:
            self.merge()
        return self

    def forward(self, x):
        out = F.linear(x, self.weight, self.bias)
        if not self.merged:
            out = out + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling
        return out


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = LoRALinear(10, 32)
        self.fc2 = LoRALinear(32, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


if __name__ == "__main__":
    model = Classifier()
    # full fine-tuning plus LoRA: the base weights stay trainable
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean()
    print("train loss", round(loss.item(), 4), "acc", acc.item())

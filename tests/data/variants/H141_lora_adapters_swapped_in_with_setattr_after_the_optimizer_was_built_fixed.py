# source: LoRA / adapter injection code that walks named_children() and replaces each nn.Linear with setattr(model, name, LoRALinear(child)) after the optimizer was created (forum and PEFT threads "LoRA weights stay at zero", "adapter parameters not updated"): the optimizer holds the old, now frozen, Linear weights; the adapters' parameters are in no optimizer
# family: H
# expect: ok
# verify: the adapter's B matrix (initialised to zero) is compared with zero after the steps
# line: 27, 30
# fix: (fixed version of H141_lora_adapters_swapped_in_with_setattr_after_the_optimizer_was_built.py) build the optimizer after the swap: opt = torch.optim.AdamW(model.parameters(), lr=1e-2) below the loop
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, base, r=2):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.a = nn.Parameter(torch.randn(r, base.in_features) * 0.1)
        self.b = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + x @ self.a.t() @ self.b.t()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    for name, child in list(model.named_children()):
        if isinstance(child, nn.Linear):
            setattr(model, name, LoRALinear(child))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 6), torch.randn(16, 2)
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the adapters never train" if model[2].b.abs().sum() == 0 else "MATCH")

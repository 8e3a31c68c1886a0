# source: adapter fine-tuning scripts that freeze the pretrained parts with one loop over itertools.chain(...) (forum threads "my adapter weights never change"): the chain lists the adapter beside the encoder, the optimizer is built over the parameters that still require grad, and the adapter is in neither
# family: H
# expect: ok
# verify: the adapter's weight is compared before and after the steps
# line: 31
# fix: (fixed version of H128_adapter_tuning_freeze_loop_over_itertools_chain_takes_the_adapter_too.py) chain only the pretrained parts: itertools.chain(model.embed.parameters(), model.encoder.parameters())
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdaptedEncoder(nn.Module):
    def __init__(self, d=12, n_cls=3):
        super().__init__()
        self.embed = nn.Linear(8, d)
        self.encoder = nn.Sequential(nn.Linear(d, d), nn.GELU())
        self.adapter = nn.Sequential(nn.Linear(d, 4), nn.ReLU(), nn.Linear(4, d))
        self.classifier = nn.Linear(d, n_cls)

    def forward(self, x):
        h = self.encoder(self.embed(x))
        return self.classifier(h + self.adapter(h))


if __name__ == "__main__":
    model = AdaptedEncoder()
    for p in itertools.chain(model.embed.parameters(), model.encoder.parameters()):
        p.requires_grad = False
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    before = model.adapter[0].weight.clone()
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    for _ in range(3):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("MISMATCH: the adapter never trained" if torch.equal(before, model.adapter[0].weight) else "MATCH")

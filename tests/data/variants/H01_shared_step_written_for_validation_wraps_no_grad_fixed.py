# source: https://github.com/Lightning-AI/pytorch-lightning/issues/19910 ("element 0 of tensors does not require grad and does not have a grad_fn" when backward runs on a loss computed by a step written for evaluation); here one shared_step serves training and validation and its forward is wrapped in torch.no_grad()
# family: H
# expect: ok
# line: 15  (backward: 32)
# fix: (fixed version of H01_shared_step_written_for_validation_wraps_no_grad.py) enable grad in the shared step when training: with torch.set_grad_enabled(training):
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def shared_step(model, batch, training):
    x, y = batch
    with torch.set_grad_enabled(training):
        logits = model(x)
    loss = F.cross_entropy(logits, y)
    acc = (logits.argmax(1) == y).float().mean()
    return loss, acc


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
    val = (torch.randn(8, 10), torch.randint(0, 3, (8,)))
    for epoch in range(2):
        model.train()
        for batch in train:
            loss, acc = shared_step(model, batch, training=True)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        val_loss, val_acc = shared_step(model, val, training=False)
        print("epoch", epoch, "val_loss", val_loss.item(), "val_acc", val_acc.item())

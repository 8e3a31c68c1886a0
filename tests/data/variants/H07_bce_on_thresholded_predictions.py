# source: forum posts behind "element 0 of tensors does not require grad" where a binary classifier thresholds its probabilities before the loss ((probs > 0.5).float()); the comparison has no gradient (see https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html)
# family: H
# expect: error
# line: 29  (backward: 32)
# fix: give the loss the probabilities (or better the logits with BCEWithLogitsLoss); keep the threshold for the accuracy only
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SpamClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(30, 16), nn.ReLU(), nn.Linear(16, 1))

    def predict(self, x):
        probs = torch.sigmoid(self.net(x)).squeeze(1)
        return probs, (probs > 0.5).float()


if __name__ == "__main__":
    model = SpamClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        x, y = torch.randn(32, 30), torch.randint(0, 2, (32,)).float()
        probs, preds = model.predict(x)
        loss = F.binary_cross_entropy(preds, y)
        acc = (preds == y).float().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item(), "acc", acc.item())

# source: multi-label classification with per-class weights (forum threads on BCEWithLogitsLoss(reduction='none') weighted by class frequency, and the error they end in: 'grad can be implicitly created only for scalar outputs'): the weighted element-wise loss is averaged over the batch dimension only, leaving one value per class, and the backward raises
# family: H
# expect: ok
# line: 16  (backward: 29)
# fix: (fixed version of H92_multilabel_class_weighted_bce_averaged_over_the_batch_only.py) reduce over the classes as well: return (per_element * class_weights).mean()
import torch
import torch.nn as nn

torch.manual_seed(0)

NUM_LABELS = 6


def weighted_multilabel_loss(logits, targets, class_weights):
    per_element = nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    return (per_element * class_weights).mean()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, NUM_LABELS))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    targets = (torch.rand(32, NUM_LABELS) > 0.7).float()
    pos_freq = targets.mean(dim=0).clamp_min(0.05)
    class_weights = 1.0 / pos_freq
    for step in range(2):
        x = torch.randn(32, 12)
        loss = weighted_multilabel_loss(model(x), targets, class_weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

# source: forum reports of 'loss = torch.tensor(loss, requires_grad=True)' added to silence 'element 0 of tensors does not require grad' (discuss.pytorch.org, 'model is not learning' threads): a soft Dice loss for segmentation computed with .item() and re-wrapped as a new leaf, so the backward reaches no parameter
# family: H
# expect: silent
# verify: the segmentation network's .grad after the backward: None means no parameter trains
# line: 17, 18
# fix: keep the Dice score a tensor and return 1 - dice without re-wrapping it
import torch
import torch.nn as nn

torch.manual_seed(0)


def soft_dice_loss(logits, masks, smooth=1.0):
    probs = torch.sigmoid(logits)
    inter = (probs * masks).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + masks.sum(dim=(1, 2, 3))
    dice = ((2 * inter + smooth) / (union + smooth)).mean().item()
    return torch.tensor(1.0 - dice, requires_grad=True)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    images = torch.randn(4, 1, 16, 16)
    masks = (images > 0.5).float()
    for epoch in range(3):
        opt.zero_grad()
        loss = soft_dice_loss(net(images), masks)
        loss.backward()
        opt.step()
        print("epoch", epoch, "dice loss %.4f" % loss.item())
    g = net[0].weight.grad
    print("MATCH" if g is not None else "MISMATCH: no parameter got a gradient (.grad is None)")

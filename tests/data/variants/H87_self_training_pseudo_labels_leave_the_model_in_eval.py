# source: self-training / pseudo-labelling loops (FixMatch-style labelling of the unlabelled batch with the model itself) on a network with a deep-supervision head that runs only in training mode (torchvision GoogLeNet/Inception aux_logits, DSN): the labelling helper switches the model to eval() and never switches back, so every training forward runs in eval mode and the auxiliary head never gets a gradient
# family: H
# expect: silent
# verify: the auxiliary head's .grad after the training steps: None means it never trains
# line: 29, 41
# fix: restore training mode in the helper after labelling (was = model.training; ...; model.train(was)), or call model.train() inside the loop
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeeplySupervisedNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 16), nn.ReLU())
        self.head = nn.Linear(16, num_classes)
        self.aux_head = nn.Linear(16, num_classes)

    def forward(self, x):
        h = self.body(x)
        if self.training:
            return self.head(h), self.aux_head(h)
        return self.head(h)


def pseudo_label(model, x_unlabeled, threshold=0.3):
    model.eval()
    with torch.no_grad():
        probs = model(x_unlabeled).softmax(dim=-1)
    conf, labels = probs.max(dim=-1)
    return labels, conf > threshold


if __name__ == "__main__":
    model = DeeplySupervisedNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x_l, y_l = torch.randn(8, 10), torch.randint(0, 4, (8,))
    x_u = torch.randn(16, 10)
    model.train()
    for step in range(3):
        labels_u, keep = pseudo_label(model, x_u)
        out = model(torch.cat([x_l, x_u]))
        logits, aux = out if isinstance(out, tuple) else (out, None)
        loss = F.cross_entropy(logits[:8], y_l) + F.cross_entropy(logits[8:][keep], labels_u[keep])
        if aux is not None:
            loss = loss + 0.4 * F.cross_entropy(aux[:8], y_l)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    g = model.aux_head.weight.grad
    print("MATCH" if g is not None else "MISMATCH: the auxiliary head never got a gradient (the model trained in eval mode)")

# source: https://github.com/tim-learn/SHOT/issues/41 context (SHOT obtain_label(): class centroids and pseudo-labels are computed at the start of each epoch in eval mode under torch.no_grad() and stored, then used as targets for every batch of the epoch)
# family: G
# expect: ok
# line: 19
# fix: none needed - the stored centroids and pseudo-labels were computed without a graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def obtain_label(netF, netC, data):
    netF.eval()
    netC.eval()
    with torch.no_grad():
        feats = netF(data)
        probs = F.softmax(netC(feats), dim=1)
        centroids = (probs.t() @ feats) / (probs.sum(0)[:, None] + 1e-8)
        dist = torch.cdist(F.normalize(feats, dim=1), F.normalize(centroids, dim=1))
        pseudo = dist.argmin(dim=1)
    netF.train()
    netC.train()
    return pseudo


if __name__ == "__main__":
    netF = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 16))
    netC = nn.Linear(16, 4)
    netC.requires_grad_(False)
    opt = torch.optim.SGD(netF.parameters(), lr=0.01, momentum=0.9)
    target_data = torch.randn(40, 12)
    for epoch in range(2):
        pseudo_labels = obtain_label(netF, netC, target_data)
        for start in range(0, 40, 10):
            outputs = netC(netF(target_data[start:start + 10]))
            softmax_out = F.softmax(outputs, dim=1)
            entropy = -(softmax_out * torch.log(softmax_out + 1e-5)).sum(1).mean()
            loss = 0.3 * F.cross_entropy(outputs, pseudo_labels[start:start + 10]) + entropy
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())

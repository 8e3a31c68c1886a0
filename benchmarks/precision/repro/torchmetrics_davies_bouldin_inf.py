"""torchmetrics 1.9.0, functional/clustering/davies_bouldin_score.py:63 (GW201 information;
DaviesBouldinScore declares is_differentiable = True): `centroid_distances = torch.cdist(c, c)`
then `centroid_distances[centroid_distances == 0] = float("inf")`. cdist saved its output; the
write changes it, and a backward through the score raises."""
import sys

import torch

data = torch.randn(12, 3, requires_grad=True)
labels = torch.arange(12) % 3
centroids = torch.stack([data[labels == k].mean(0) for k in range(3)])
intra = torch.stack([(data[labels == k] - centroids[k]).pow(2).sum(1).sqrt().mean() for k in range(3)])
centroid_distances = torch.cdist(centroids, centroids)
centroid_distances[centroid_distances == 0] = float("inf")
score = ((intra[None] + intra[:, None]) / centroid_distances).max(dim=1).values.mean()
try:
    score.backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)

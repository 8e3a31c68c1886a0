# source: https://github.com/pyg-team/pytorch-frame/pull/229 ("Add detach() to HashTextEmbedder": the text columns are pre-encoded once with an nn.Embedding that is not part of the model; without detach the second training iteration fails with "Trying to backward through the graph a second time")
# family: D
# expect: error
# line: 24  (backward: 45)
# fix: pre-encode the text columns without a graph: return self.embedding(idx).detach()
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HashTextEmbedder:
    """Pre-encoding of text columns: hash each sentence into a bucket and look it up."""

    def __init__(self, num_hash_bins=64, dim=8):
        self.num_hash_bins = num_hash_bins
        self.embedding = nn.Embedding(num_hash_bins, dim)

    def __call__(self, sentences):
        idx = torch.tensor([zlib.crc32(s.encode()) % self.num_hash_bins for s in sentences])
        return self.embedding(idx)


def materialize(rows, embedder):
    columns = {"title": [r[0] for r in rows], "body": [r[1] for r in rows]}
    feats = {name: embedder(values) for name, values in columns.items()}
    numeric = torch.tensor([[r[2]] for r in rows], dtype=torch.float32)
    return torch.cat([feats["title"], feats["body"], numeric], dim=1)


if __name__ == "__main__":
    words = ["red", "blue", "green", "fast", "slow", "cheap", "new", "old"]
    rows = [(f"{words[i % 8]} {words[(i * 3) % 8]}", f"{words[(i * 5) % 8]} item", float(i % 7)) for i in range(40)]
    labels = torch.tensor([i % 2 for i in range(40)])
    tensor_frame = materialize(rows, HashTextEmbedder())
    model = nn.Sequential(nn.Linear(17, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(2):
        for start in range(0, 40, 10):
            loss = F.cross_entropy(model(tensor_frame[start:start + 10]), labels[start:start + 10])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())

# source: Kim-style text CNNs (max-over-time pooling: pooled, _ = conv_out.max(dim=2)) that zero the pooled features of empty / all-padding documents in place
# family: G
# expect: ok
# line: 27  (backward: 37)
# fix: none needed - max over a dimension saves only the argmax indices for its backward, not the values, so writing into the pooled values in place is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextCNN(nn.Module):
    def __init__(self, vocab=40, d=12, n_filters=8, n_cls=3, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx
        self.emb = nn.Embedding(vocab, d, padding_idx=pad_idx)
        self.convs = nn.ModuleList([nn.Conv1d(d, n_filters, k, padding=k // 2) for k in (3, 5)])
        self.fc = nn.Linear(2 * n_filters, n_cls)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)
        empty = ids.eq(self.pad_idx).all(dim=1)
        feats = []
        for conv in self.convs:
            pooled, _ = F.relu(conv(x)).max(dim=2)
            pooled[empty] = 0.0
            feats.append(pooled)
        return self.fc(torch.cat(feats, dim=1))


if __name__ == "__main__":
    model = TextCNN()
    ids = torch.randint(1, 40, (4, 9))
    ids[2] = 0
    loss = F.cross_entropy(model(ids), torch.tensor([0, 2, 1, 1]))
    loss.backward()
    print("loss", loss.item())

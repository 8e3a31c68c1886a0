# source: binary classifiers returning raw logits that are squeezed in place (logits.squeeze_()) before BCEWithLogitsLoss
# family: G
# expect: ok
# line: 27  (backward: 30)
# fix: none needed - the logits are the output of a Linear, whose backward saves its input and weight, not its output; BCEWithLogits then saves the squeezed tensor after the in-place view change
import torch
import torch.nn as nn

torch.manual_seed(0)


class SpamFilter(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, d)
        self.fc = nn.Linear(d, 1)

    def forward(self, ids):
        return self.fc(self.emb(ids))


if __name__ == "__main__":
    model = SpamFilter()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, labels = torch.randint(0, 50, (4, 7)), torch.tensor([1.0, 0.0, 1.0, 1.0])
    logits = model(ids)
    logits.squeeze_()
    loss = nn.BCEWithLogitsLoss()(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

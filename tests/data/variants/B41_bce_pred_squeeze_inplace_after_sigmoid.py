# source: binary classifiers whose training step squeezes the sigmoid output in place (pred.squeeze_()) before nn.BCELoss; squeeze_ bumps the version of the output SigmoidBackward saved
# family: B
# expect: error
# line: 25  (backward: 27)
# fix: squeeze out-of-place: pred = pred.squeeze(1) (or end the model with logits and use BCEWithLogitsLoss)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SentimentNet(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, d)
        self.fc = nn.Linear(d, 1)

    def forward(self, ids):
        return torch.sigmoid(self.fc(self.emb(ids)))


def train_step(model, optimizer, criterion, ids, labels):
    optimizer.zero_grad()
    pred = model(ids)
    pred.squeeze_()
    loss = criterion(pred, labels)
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    model = SentimentNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, labels = torch.randint(0, 50, (4, 7)), torch.tensor([1.0, 0.0, 1.0, 1.0])
    print("loss", train_step(model, opt, nn.BCELoss(), ids, labels))

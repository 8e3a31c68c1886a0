# source: forum "loading GloVe vectors into nn.Embedding row by row" (a view of a leaf Variable that requires grad is used in an in-place operation)
# family: A
# expect: error
# line: 22
# fix: copy the pretrained rows inside `with torch.no_grad():` (or into self.embedding.weight.data)
import torch
from torch import nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, dim=8, n_cls=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.fc = nn.Linear(dim, n_cls)

    def load_pretrained(self, vocab, vectors):
        hits = 0
        for word, idx in vocab.items():
            if word in vectors:
                self.embedding.weight[idx] = vectors[word]
                hits += 1
        return hits

    def forward(self, ids):
        return self.fc(self.embedding(ids).mean(1))


if __name__ == "__main__":
    vocab = {"<pad>": 0, "the": 1, "cat": 2, "sat": 3, "mat": 4}
    vectors = {w: torch.randn(8) for w in ("the", "cat", "mat")}
    model = TextClassifier(len(vocab))
    print("loaded", model.load_pretrained(vocab, vectors))
    ids = torch.tensor([[1, 2, 3, 0], [4, 1, 0, 0]])
    loss = nn.functional.cross_entropy(model(ids), torch.tensor([0, 2]))
    loss.backward()
    print("loss", loss.item())

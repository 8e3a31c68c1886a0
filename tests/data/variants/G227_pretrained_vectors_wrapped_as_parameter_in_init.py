# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/80 done at construction time: wrapping a tensor in nn.Parameter is how a module takes ownership of initial values (pretrained word vectors here); it cuts nothing because nothing upstream was meant to be trained
# family: G
# expect: ok
# line: 21
# fix: none needed - the Parameter is created once from constant data, registered, and handed to the optimizer
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def load_pretrained_vectors(vocab=30, dim=6):
    gen = torch.Generator().manual_seed(1)
    return torch.randn(vocab, dim, generator=gen)


class BagOfWords(nn.Module):
    def __init__(self, vectors, n_classes=3):
        super().__init__()
        self.embedding = nn.Parameter(vectors.clone())
        self.fc = nn.Linear(vectors.size(1), n_classes)

    def forward(self, tokens):
        return self.fc(F.embedding(tokens, self.embedding).mean(dim=1))


if __name__ == "__main__":
    model = BagOfWords(load_pretrained_vectors())
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model.embedding.detach().clone()
    for step in range(3):
        tokens, y = torch.randint(0, 30, (8, 5)), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(tokens), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
    print("MATCH" if not torch.equal(before, model.embedding) else "MISMATCH: the embedding never moved")

# source: text classifiers that build the lookup with nn.Embedding.from_pretrained(self.emb.weight, freeze=False) inside forward (forum threads "embedding weights not updating"): from_pretrained wraps the weight in a new Parameter, so the table the optimizer holds never gets a gradient
# family: H
# expect: ok
# verify: the vocabulary table is compared before and after the SGD steps
# line: 21  (backward: 35)
# fix: (fixed version of H109_bag_of_words_table_rewrapped_by_from_pretrained_in_forward.py) look up through the module's own table: table = self.vocab_vectors
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagClassifier(nn.Module):
    def __init__(self, vocab=50, dim=8, n_cls=3):
        super().__init__()
        self.vocab_vectors = nn.Embedding(vocab, dim)
        self.cls = nn.Linear(dim, n_cls)

    def forward(self, tokens):
        table = self.vocab_vectors
        vectors = table(tokens)
        return self.cls(vectors.mean(1))


if __name__ == "__main__":
    model = BagClassifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    tokens = torch.randint(0, 50, (16, 7))
    labels = torch.randint(0, 3, (16,))
    before = model.vocab_vectors.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        opt.step()
    moved = not torch.equal(before, model.vocab_vectors.weight)
    print("loss %.4f" % loss.item())
    print("MATCH" if moved else "MISMATCH: the vocabulary table never moves")

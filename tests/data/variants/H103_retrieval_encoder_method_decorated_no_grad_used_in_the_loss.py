# source: sentence-embedding models with an `encode` method decorated @torch.no_grad() for retrieval (the sentence-transformers style of inference-only encode), reused in training for an auxiliary contrastive term (forum threads "my contrastive loss does not change anything"): every call of the decorated method runs without grad, so the term is a constant and the projection it goes through never trains
# family: H
# expect: silent
# verify: the projection used only by the contrastive term is compared before and after the training steps
# line: 24
# fix: drop the decorator (wrap inference call sites in torch.no_grad() instead)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=100, dim=32, n_classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)
        self.classifier = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        return self.classifier(self.embed(tokens))

    @torch.no_grad()
    def encode(self, tokens):
        return F.normalize(self.proj(self.embed(tokens)), dim=-1)


def info_nce(a, b, temperature=0.1):
    logits = a @ b.t() / temperature
    return F.cross_entropy(logits, torch.arange(a.shape[0]))


if __name__ == "__main__":
    model = SentenceEncoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    start = model.proj.weight.detach().clone()
    for step in range(4):
        anchors, positives = torch.randint(0, 100, (8, 12)), torch.randint(0, 100, (8, 12))
        labels = torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(anchors), labels) + info_nce(model.encode(anchors), model.encode(positives))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, model.proj.weight.detach())
    print("MATCH" if moved else "MISMATCH: the projection of the contrastive term never trained")

# source: https://github.com/RUCAIBox/RecBole/issues/2027 ("Freezed Pre-trained Embeddings": a model whose only parameters are pre-trained embeddings, loaded frozen, fails with "element 0 of tensors does not require grad and does not have a grad_fn"); nn.Embedding.from_pretrained freezes by default
# family: H
# expect: ok
# line: 16, 17  (backward: 30)
# fix: (fixed version of H10_pretrained_embeddings_frozen_by_from_pretrained_default.py) load the embeddings trainable (nn.Embedding.from_pretrained(weights, freeze=False)), or add trainable parameters on top
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PretrainedMF(nn.Module):
    def __init__(self, user_vectors, item_vectors):
        super().__init__()
        self.user_embedding = nn.Embedding.from_pretrained(user_vectors, freeze=False)
        self.item_embedding = nn.Embedding.from_pretrained(item_vectors, freeze=False)

    def forward(self, users, items):
        return (self.user_embedding(users) * self.item_embedding(items)).sum(-1)


if __name__ == "__main__":
    model = PretrainedMF(torch.randn(20, 8), torch.randn(30, 8))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        users, items, clicks = torch.randint(0, 20, (16,)), torch.randint(0, 30, (16,)), torch.randint(0, 2, (16,)).float()
        loss = F.binary_cross_entropy_with_logits(model(users, items), clicks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())

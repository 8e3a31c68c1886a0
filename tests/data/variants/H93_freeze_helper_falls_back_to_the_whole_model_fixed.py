# source: generic fine-tuning helpers that look the backbone up by attribute name with a fallback to the model itself (getattr(model, 'backbone', model), as wrappers over timm/Hugging Face models do), on a model whose trunk is called 'encoder': the helper freezes every parameter, the head included, and the backward raises 'element 0 of tensors does not require grad and does not have a grad_fn'
# family: H
# expect: ok
# line: 24, 25  (backward: 36)
# fix: (fixed version of H93_freeze_helper_falls_back_to_the_whole_model.py) look up the module the model actually has (getattr(model, 'encoder')) instead of falling back to the whole model
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16, num_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.EmbeddingBag(vocab, dim), nn.Linear(dim, dim), nn.Tanh())
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        return self.head(self.encoder(tokens))


def freeze_backbone(model):
    backbone = getattr(model, "encoder")
    backbone.requires_grad_(False)
    return model


if __name__ == "__main__":
    model = freeze_backbone(TextClassifier())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens, labels = torch.randint(0, 100, (8, 12)), torch.randint(0, 3, (8,))
    for step in range(2):
        loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss %.4f" % loss.item())

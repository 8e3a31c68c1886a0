# source: metric-learning fine-tuning that reuses a VGG-style `classifier[:-1]` (Linear, ReLU(inplace=True), Dropout) as embedding head under model.eval() to freeze BN/dropout; in eval nn.Dropout returns its input object, so the in-place scaling writes the ReLU output autograd saved
# family: C
# expect: ok
# line: 26  (backward: 35)
# fix: (fixed version of C60_eval_dropout_alias_embedding_scaled_inplace.py) scale out-of-place: emb = emb * self.scale
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EmbeddingNet(nn.Module):
    def __init__(self, d_in=32, d_hid=24, n_cls=5, scale=4.0):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, d_hid), nn.BatchNorm1d(d_hid))
        self.classifier = nn.Sequential(
            nn.Linear(d_hid, 16), nn.ReLU(inplace=True), nn.Dropout(0.5),
            nn.Linear(16, n_cls),
        )
        self.embed_head = self.classifier[:-1]
        self.scale = scale

    def embed(self, x):
        emb = self.embed_head(self.features(x))
        emb = emb * self.scale
        return emb


def triplet_step(model, opt, anchor, pos, neg, margin=0.2):
    model.eval()  # keep BN statistics frozen while fine-tuning
    ea, ep, en = model.embed(anchor), model.embed(pos), model.embed(neg)
    loss = F.triplet_margin_loss(ea, ep, en, margin=margin)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


if __name__ == "__main__":
    model = EmbeddingNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    a, p, n = torch.randn(3, 8, 32).unbind(0)
    print("loss", triplet_step(model, opt, a, p, n))

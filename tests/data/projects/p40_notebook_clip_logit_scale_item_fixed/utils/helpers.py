import torch
import torch.nn.functional as F


def get_logit_scale(model, max_scale=100.0):
    # CLIP clamps the learned temperature at 100
    return model.logit_scale.exp().clamp(max=max_scale)


def clip_loss(image_emb, text_emb, scale):
    image_emb = F.normalize(image_emb, dim=-1)
    text_emb = F.normalize(text_emb, dim=-1)
    logits = scale * image_emb @ text_emb.t()
    labels = torch.arange(logits.shape[0])
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))

import torch


def build_optimizer(model, lr, weight_decay):
    """AdamW with the usual no-decay groups (biases and LayerNorm weights)."""
    no_decay = ["bias", "LayerNorm.weight"]
    decay_params = [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]
    no_decay_params = [p for n, p in model.named_parameters() if n.endswith(".bias")]
    groups = [
        {"params": decay_params, "weight_decay": weight_decay},
        {"params": no_decay_params, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr)

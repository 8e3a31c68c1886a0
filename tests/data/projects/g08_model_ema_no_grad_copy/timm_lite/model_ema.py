"""After timm/utils/model_ema.py (ModelEmaV2)."""
import copy

import torch
import torch.nn as nn


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1.0 - self.decay) * m)

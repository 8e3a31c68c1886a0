# source: CoOp-style prompt learning code that caches the text features (computed from the learnable context vectors) on first use and reuses them on every later step
# family: D
# expect: error
# line: 27  (backward: 42)
# fix: do not cache tensors that depend on trainable parameters while training: recompute the text features in every forward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptCLIP(nn.Module):
    def __init__(self, n_cls=4, n_ctx=3, d=8):
        super().__init__()
        self.ctx = nn.Parameter(0.02 * torch.randn(n_ctx, d))
        self.register_buffer("class_tokens", torch.randn(n_cls, d))
        self.text_encoder = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.image_encoder = nn.Linear(12, d)
        for p in list(self.text_encoder.parameters()) + list(self.image_encoder.parameters()):
            p.requires_grad_(False)
        self._text_features = None

    def text_features(self):
        if self._text_features is None:
            prompts = self.class_tokens[:, None, :] + self.ctx[None, :, :]
            self._text_features = F.normalize(self.text_encoder(prompts).mean(1), dim=-1)
        return self._text_features

    def forward(self, images):
        img = F.normalize(self.image_encoder(images), dim=-1)
        return 100.0 * img @ self.text_features().t()


if __name__ == "__main__":
    model = PromptCLIP()
    optimizer = torch.optim.SGD([model.ctx], lr=2e-3)
    for step in range(3):
        images, labels = torch.randn(6, 12), torch.randint(0, 4, (6,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("loss", loss.item())

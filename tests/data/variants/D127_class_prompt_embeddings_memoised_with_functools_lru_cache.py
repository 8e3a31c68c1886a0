# source: CLIP-style zero-shot/prompt-tuning heads that memoise the class-text embeddings with @functools.lru_cache on a method to avoid re-encoding the prompts every step (forum threads "Trying to backward through the graph a second time" with cached text features): the cached tensor carries the first step's graph, freed by its backward, and the second step's backward raises
# family: D
# expect: error
# line: 22  (backward: 38)
# fix: do not memoise a value that depends on trainable parameters: drop @functools.lru_cache (or cache it detached under no_grad when the projection is frozen)
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptHead(nn.Module):
    def __init__(self, n_cls=4, d_txt=10, d=8):
        super().__init__()
        self.register_buffer("prompt_tokens", torch.randn(n_cls, d_txt))
        self.text_proj = nn.Linear(d_txt, d)
        self.image_proj = nn.Linear(12, d)

    @functools.lru_cache(maxsize=None)
    def class_embeddings(self):
        return F.normalize(self.text_proj(self.prompt_tokens), dim=-1)

    def forward(self, images):
        img = F.normalize(self.image_proj(images), dim=-1)
        return 20.0 * img @ self.class_embeddings().T


if __name__ == "__main__":
    head = PromptHead()
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    for step in range(3):
        images, labels = torch.randn(6, 12), torch.randint(0, 4, (6,))
        loss = F.cross_entropy(head(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())

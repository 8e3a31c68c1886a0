# source: CoOp-style prompt learning (KaiyangZhou/CoOp: learnable context vectors in front of frozen CLIP token embeddings) with the context written into the embedded prompt in place: the token embedding and the slice that holds the context slots are both taken inside torch.no_grad(), and the copy_ of the learnable context into that slice raises 'A view was created in no_grad mode and is being modified inplace with grad mode enabled'
# family: C
# expect: ok
# line: 24  (backward: 25)
# fix: (fixed version of C209_prompt_context_written_into_slots_sliced_under_no_grad.py) take the slice outside the no_grad block (or build the prompt with torch.cat([prefix, ctx, suffix], dim=1) as CoOp does)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptLearner(nn.Module):
    def __init__(self, token_embedding, prompt_tokens, n_ctx=4):
        super().__init__()
        self.token_embedding = token_embedding
        self.register_buffer("prompt_tokens", prompt_tokens)
        self.n_ctx = n_ctx
        self.ctx = nn.Parameter(0.02 * torch.randn(n_ctx, token_embedding.embedding_dim))

    def forward(self):
        with torch.no_grad():
            prompts = self.token_embedding(self.prompt_tokens)
        ctx_slots = prompts[:, 1:1 + self.n_ctx]
        ctx_slots.copy_(self.ctx.unsqueeze(0).expand_as(ctx_slots))
        return prompts


if __name__ == "__main__":
    token_embedding = nn.Embedding(100, 16).requires_grad_(False)
    text_encoder = nn.Sequential(nn.Linear(16, 16), nn.Tanh())
    text_encoder.requires_grad_(False)
    prompt_tokens = torch.randint(0, 100, (5, 12))
    learner = PromptLearner(token_embedding, prompt_tokens)
    optimizer = torch.optim.SGD(learner.parameters(), lr=2e-3)
    image_features = F.normalize(torch.randn(8, 16), dim=-1)
    labels = torch.randint(0, 5, (8,))
    text_features = F.normalize(text_encoder(learner()).mean(dim=1), dim=-1)
    loss = F.cross_entropy(100.0 * image_features @ text_features.t(), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss %.4f" % loss.item())

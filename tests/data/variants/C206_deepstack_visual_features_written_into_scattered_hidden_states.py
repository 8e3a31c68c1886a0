# source: https://github.com/huggingface/transformers/pull/41535 ("[Qwen3VL] fix: hidden_states in place modification error": hidden_states[visual_pos_masks, :] = local_this raises "Output 0 of SliceBackward0 is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is)"); same error in https://github.com/ccarliu/m3ae/issues/15 behind DataParallel's Scatter
# family: C
# expect: error
# line: 35
# fix: write into a copy of the scattered hidden states: hidden_states = hidden_states.clone() before hidden_states[visual_pos_masks, :] = ...
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScatterToSequenceParallelRegion(torch.autograd.Function):
    """Split the sequence across tensor-parallel ranks; with one rank the input is returned as-is."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class DeepstackDecoder(nn.Module):
    def __init__(self, vocab=40, dim=8, vis_dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.visual_merger = nn.Linear(vis_dim, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab)

    def deepstack_process(self, hidden_states, visual_pos_masks, visual_embeds):
        local_this = hidden_states[visual_pos_masks, :] + visual_embeds
        hidden_states[visual_pos_masks, :] = local_this
        return hidden_states

    def forward(self, tokens, visual_pos_masks, image_feats):
        hidden_states = ScatterToSequenceParallelRegion.apply(self.embed(tokens))
        visual_embeds = self.visual_merger(image_feats)
        for i, layer in enumerate(self.layers):
            hidden_states = torch.tanh(layer(hidden_states)) if i else hidden_states
            if i == 0:
                hidden_states = self.deepstack_process(hidden_states, visual_pos_masks, visual_embeds)
        return self.lm_head(hidden_states)


if __name__ == "__main__":
    model = DeepstackDecoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(2):
        tokens = torch.randint(0, 40, (2, 7))
        visual_pos_masks = torch.zeros(2, 7, dtype=torch.bool)
        visual_pos_masks[:, 1:4] = True
        image_feats = torch.randn(int(visual_pos_masks.sum()), 6)
        logits = model(tokens, visual_pos_masks, image_feats)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 40), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

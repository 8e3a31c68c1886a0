import torch

from .logits_process import ban_tokens_, repetition_penalty_


def banned_bigram_tokens(tokens):
    out = []
    for seq in tokens.tolist():
        last = seq[-1]
        out.append([seq[i + 1] for i in range(len(seq) - 1) if seq[i] == last])
    return out


@torch.no_grad()
def generate(model, prompt, max_new_tokens, generator, penalty=1.2):
    tokens = prompt.clone()
    hidden = torch.zeros(prompt.size(0), model.dim)
    for t in range(prompt.size(1) - 1):
        _, hidden = model.step(tokens[:, t], hidden)
    for _ in range(max_new_tokens):
        logits, hidden = model.step(tokens[:, -1], hidden)
        logits = repetition_penalty_(logits, tokens, penalty)
        logits = ban_tokens_(logits, banned_bigram_tokens(tokens))
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        tokens = torch.cat([tokens, nxt], dim=1)
    return tokens

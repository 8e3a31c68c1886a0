"""Sequence-level training by sampling (REINFORCE with a reward on the sampled sequence),
with n-gram blocking while sampling."""
import torch
from torch.distributions import Categorical

from model import TinyLM
from utils.ngrams import banned_ngram_tokens
from utils.sampling import ban_tokens_


def reward(tokens):
    return (tokens % 2 == 0).float().mean(dim=1)


def sample_sequences(model, batch, length, generator):
    tokens = torch.zeros(batch, 1, dtype=torch.long)
    hidden = torch.zeros(batch, 16)
    log_probs = []
    for _ in range(length):
        logits, hidden = model.step(tokens[:, -1], hidden)
        logits = ban_tokens_(logits, banned_ngram_tokens(tokens, 2))
        dist = Categorical(logits=logits)
        nxt = dist.sample()
        log_probs.append(dist.log_prob(nxt))
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
    return tokens[:, 1:], torch.stack(log_probs, dim=1)


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = TinyLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for it in range(2):
        tokens, log_probs = sample_sequences(model, batch=4, length=6, generator=gen)
        r = reward(tokens)
        loss = -((r - r.mean())[:, None] * log_probs).sum(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iter {it}: mean reward {r.mean().item():.3f}")


if __name__ == "__main__":
    main()

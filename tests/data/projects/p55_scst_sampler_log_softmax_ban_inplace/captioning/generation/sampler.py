import torch
import torch.nn.functional as F


class MultinomialSampler:
    """Samples captions token by token, keeping the log-probability of every sampled token."""

    def __init__(self, bos_idx=1, pad_idx=0, max_len=5):
        self.bos_idx = bos_idx
        self.pad_idx = pad_idx
        self.max_len = max_len

    def sample(self, decoder, feats):
        tokens = torch.full((feats.size(0),), self.bos_idx, dtype=torch.long)
        state = decoder.init_state(feats)
        seq, seq_logprobs = [], []
        for _ in range(self.max_len):
            logits, state = decoder.step(tokens, state)
            logprobs = F.log_softmax(logits, dim=-1)
            logprobs[:, self.pad_idx] = float("-inf")  # never sample padding
            tokens = torch.multinomial(logprobs.exp(), 1).squeeze(1)
            seq.append(tokens)
            seq_logprobs.append(logprobs.gather(1, tokens.unsqueeze(1)).squeeze(1))
        return torch.stack(seq, 1), torch.stack(seq_logprobs, 1)

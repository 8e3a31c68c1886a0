import torch


class Corpus:
    """A synthetic token stream standing in for wikitext-2."""

    def __init__(self, n_tokens=400, vocab=30, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ntokens = vocab
        self.train = torch.randint(0, vocab, (n_tokens,), generator=g)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)

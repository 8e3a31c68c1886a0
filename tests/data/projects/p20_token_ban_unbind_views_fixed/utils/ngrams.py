def banned_ngram_tokens(prev_tokens, no_repeat_ngram_size):
    """Tokens that would repeat an n-gram already generated (after transformers'
    calc_banned_ngram_tokens)."""
    banned = []
    for seq in prev_tokens:
        seq = seq.tolist()
        n = no_repeat_ngram_size
        if len(seq) + 1 < n:
            banned.append([])
            continue
        seen = {}
        for i in range(len(seq) - n + 1):
            prefix, nxt = tuple(seq[i:i + n - 1]), seq[i + n - 1]
            seen.setdefault(prefix, []).append(nxt)
        banned.append(seen.get(tuple(seq[len(seq) - n + 1:]), []))
    return banned

def ban_tokens_(logits, banned):
    for i, banned_ids in enumerate(banned):
        if banned_ids:
            logits[i, banned_ids] = -float("inf")
    return logits

def ban_tokens_(logits, banned):
    for next_token_logit, banned_ids in zip(logits, banned):
        if banned_ids:
            next_token_logit[banned_ids] = -float("inf")
    return logits

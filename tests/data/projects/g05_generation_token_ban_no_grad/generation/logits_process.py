def ban_tokens_(logits, banned):
    for next_token_logit, banned_ids in zip(logits, banned):
        if banned_ids:
            next_token_logit[banned_ids] = -float("inf")
    return logits


def repetition_penalty_(logits, prev_tokens, penalty):
    for i in range(logits.size(0)):
        for tok in set(prev_tokens[i].tolist()):
            if logits[i, tok] < 0:
                logits[i, tok] *= penalty
            else:
                logits[i, tok] /= penalty
    return logits

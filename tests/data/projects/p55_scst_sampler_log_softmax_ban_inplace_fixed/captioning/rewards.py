import torch


def toy_cider(seq, target_token=3):
    """Stand-in for CIDEr: the fraction of positions holding the target token."""
    return (seq == target_token).float().mean(dim=1)


def self_critical_loss(seq_logprobs, reward, baseline):
    advantage = (reward - baseline).unsqueeze(1)
    return -(advantage * seq_logprobs).mean()

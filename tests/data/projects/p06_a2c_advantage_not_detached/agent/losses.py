def a2c_loss(log_probs, values, returns, value_coef=0.5):
    """Policy gradient with the critic as a baseline, plus the critic's regression loss."""
    advantages = returns - values
    policy_loss = -(log_probs * advantages).mean()
    value_loss = advantages.pow(2).mean()
    return policy_loss + value_coef * value_loss

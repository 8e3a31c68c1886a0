def clip_weights(net, clamp):
    """WGAN's Lipschitz constraint: clamp every critic weight after its update."""
    for p in net.parameters():
        p.data.clamp_(-clamp, clamp)

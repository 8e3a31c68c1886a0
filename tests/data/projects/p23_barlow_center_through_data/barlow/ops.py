def center_(z):
    """Remove the batch mean in place (no copy of the embeddings)."""
    z.data.sub_(z.data.mean(dim=0, keepdim=True))
    return z


def off_diagonal(m):
    n = m.shape[0]
    return m.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

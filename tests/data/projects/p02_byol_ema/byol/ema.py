"""Exponential moving average of the online network (BYOL's target update)."""


def update_moving_average(target, online, tau):
    for t, o in zip(target.parameters(), online.parameters()):
        t.mul_(tau).add_(o.detach(), alpha=1 - tau)

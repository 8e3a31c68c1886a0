import math


def grl_alpha(step, total, gamma=10.0):
    p = step / total
    return 2.0 / (1.0 + math.exp(-gamma * p)) - 1

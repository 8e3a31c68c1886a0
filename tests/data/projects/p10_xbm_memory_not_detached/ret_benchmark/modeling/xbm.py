"""Cross-batch memory, after msight-tech/research-xbm ret_benchmark/modeling/xbm.py."""
import torch


class XBM:
    def __init__(self, cfg, dim):
        self.K = cfg["XBM"]["SIZE"]
        self.feats = torch.zeros(self.K, dim)
        self.targets = torch.zeros(self.K, dtype=torch.long)
        self.ptr = 0

    @property
    def is_full(self):
        return self.targets[-1].item() != 0

    def get(self):
        if self.is_full:
            return self.feats, self.targets
        return self.feats[:self.ptr], self.targets[:self.ptr]

    def enqueue_dequeue(self, feats, targets):
        q_size = len(targets)
        if self.ptr + q_size > self.K:
            self.feats[-q_size:] = feats
            self.targets[-q_size:] = targets
            self.ptr = 0
        else:
            self.feats[self.ptr: self.ptr + q_size] = feats
            self.targets[self.ptr: self.ptr + q_size] = targets
            self.ptr += q_size

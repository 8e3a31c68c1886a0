"""Self-critical sequence training (reduced): REINFORCE with the greedy-free mean baseline."""
import torch

from captioning.generation import Sampler
from captioning.models import GRUDecoder
from captioning.rewards import self_critical_loss, toy_cider

opt = {"lr": 5e-4, "iters": 3, "batch_size": 8, "max_len": 5}


def train(opt):
    torch.manual_seed(0)
    decoder = GRUDecoder()
    sampler = Sampler(max_len=opt["max_len"])
    optimizer = torch.optim.Adam(decoder.parameters(), lr=opt["lr"])
    for it in range(opt["iters"]):
        feats = torch.randn(opt["batch_size"], 6)
        seq, seq_logprobs = sampler.sample(decoder, feats)
        reward = toy_cider(seq)
        loss = self_critical_loss(seq_logprobs, reward, reward.mean())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(it, round(reward.mean().item(), 4))


if __name__ == "__main__":
    train(opt)

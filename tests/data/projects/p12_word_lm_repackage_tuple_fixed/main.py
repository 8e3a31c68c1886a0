import argparse

import torch
import torch.nn as nn

import data
import model
from utils import repackage_hidden

parser = argparse.ArgumentParser(description="word-level language model (after pytorch/examples)")
parser.add_argument("--model", type=str, default="LSTM")
parser.add_argument("--bptt", type=int, default=5)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
args = parser.parse_args()

torch.manual_seed(1111)
corpus = data.Corpus()
train_data = data.batchify(corpus.train, 4)
net = model.RNNModel(args.model, corpus.ntokens, 8, 16, 2)
criterion = nn.NLLLoss()


def train(max_batches=3):
    net.train()
    hidden = net.init_hidden(4)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        if batch == max_batches:
            break
        inputs, targets = data.get_batch(train_data, i, args.bptt)
        net.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = net(inputs, hidden)
        loss = criterion(torch.log_softmax(output, -1).view(-1, corpus.ntokens), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), args.clip)
        for p in net.parameters():
            p.data.add_(p.grad, alpha=-args.lr)
        print(f"batch {batch}: loss {loss.item():.3f}")


if __name__ == "__main__":
    train()

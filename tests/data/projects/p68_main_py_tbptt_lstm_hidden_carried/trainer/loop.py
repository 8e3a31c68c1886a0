import torch.nn.functional as F


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def train_epoch(model, optimizer, data, bptt, batch_size, ntokens):
    model.train()
    hidden = model.init_hidden(batch_size)
    total = 0.0
    for i in range(0, data.size(0) - 1, bptt):
        inp, targets = get_batch(data, i, bptt)
        optimizer.zero_grad()
        output, hidden = model(inp, hidden)
        loss = F.cross_entropy(output.view(-1, ntokens), targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total

import torch
import torch.nn as nn

from seq2seq import AttnDecoder, Encoder, Seq2Seq


def make_batch(generator, batch=4, src_len=6, tgt_len=5, vocab=16):
    src = torch.randint(2, vocab, (batch, src_len), generator=generator)
    src[0, 4:] = 0
    src[2, 5:] = 0
    tgt = torch.randint(2, vocab, (batch, tgt_len), generator=generator)
    return src, tgt


def train(config):
    torch.manual_seed(config["seed"])
    gen = torch.Generator().manual_seed(config["seed"])
    model = Seq2Seq(Encoder(config["vocab"], config["hidden"]), AttnDecoder(config["vocab"], config["hidden"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    criterion = nn.CrossEntropyLoss()
    for it in range(config["iters"]):
        src, tgt = make_batch(gen, vocab=config["vocab"])
        logits = model(src, tgt)
        loss = criterion(logits.reshape(-1, config["vocab"]), tgt.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print(f"iter {it}: loss {loss.item():.4f}")

"""word_language_model in small: nn.GRU and a 2-layer nn.LSTM with dropout, a few SGD steps (correct code)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(20, 6)
gru = nn.GRU(6, 8, batch_first=True)
lstm = nn.LSTM(8, 8, num_layers=2, dropout=0.2)
decoder = nn.Linear(8, 20)
params = [p for m in (emb, gru, lstm, decoder) for p in m.parameters()]
opt = torch.optim.SGD(params, lr=0.5)
tokens = torch.randint(0, 20, (3, 7))
targets = torch.randint(0, 20, (3, 7))
hidden = None
for step in range(3):
    opt.zero_grad()
    out, _ = gru(emb(tokens))
    out, hidden = lstm(out.transpose(0, 1), hidden)
    hidden = tuple(h.detach() for h in hidden)
    logits = decoder(out.transpose(0, 1))
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), targets.reshape(-1))
    loss.backward()
    opt.step()
    print("step %d loss %.8f grad %.8f" % (step, loss.item(), sum(p.grad.abs().sum().item() for p in params)))

# source: RNN language-model scripts that keep params = model.parameters() in a variable for both the optimizer and clip_grad_norm_ (forum threads "gradient clipping has no effect", "exploding gradients despite clip_grad_norm_"): the optimizer's constructor consumes the generator, so every later clip_grad_norm_(params, ...) clips an empty list
# family: H
# expect: silent
# verify: the total gradient norm after clipping is compared with the clipping threshold
# line: 26
# fix: keep a list: params = list(model.parameters())
import torch
import torch.nn as nn

torch.manual_seed(0)


class CharLM(nn.Module):
    def __init__(self, vocab=11, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.out(self.rnn(self.emb(tokens))[0])


if __name__ == "__main__":
    model = CharLM()
    params = model.parameters()
    opt = torch.optim.SGD(params, lr=0.5)
    tokens = torch.randint(0, 11, (4, 9))
    opt.zero_grad()
    loss = 50.0 * nn.functional.cross_entropy(model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)
    total = torch.stack([p.grad.norm() for p in model.parameters()]).norm().item()
    opt.step()
    print("MISMATCH: gradients were not clipped (norm %.1f)" % total if total > 1.01 else "MATCH")

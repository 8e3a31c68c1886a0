# source: https://github.com/archinetai/smart-pytorch/issues/5 ("error while using SMARTLoss": noise_gradient, = torch.autograd.grad(loss, noise) -> "One of the differentiated Tensors appears not to have been used in the graph"): the perturbed forward does not actually consume the noise
# family: H
# expect: error
# line: 30  (backward: 32)
# fix: run the perturbed forward on the perturbed embeddings: state_perturbed = model.forward_embeds(embed + noise)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=40, dim=16, n_cls=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, 32), nn.Tanh())
        self.out = nn.Linear(32, n_cls)

    def forward_embeds(self, embeds):
        return self.out(self.encoder(embeds).mean(dim=1))

    def forward(self, input_ids):
        return self.forward_embeds(self.embeddings(input_ids))


def smart_regularizer(model, input_ids, state, step_size=1e-3, epsilon=1e-6, noise_var=1e-5):
    embed = model.embeddings(input_ids)
    noise = (torch.randn_like(embed) * noise_var).requires_grad_()
    state_perturbed = model(input_ids)
    loss = F.kl_div(F.log_softmax(state_perturbed, -1), F.softmax(state.detach(), -1), reduction="batchmean")
    (noise_gradient,) = torch.autograd.grad(loss, noise)
    step = noise + step_size * noise_gradient
    noise = (step / (step.norm(dim=-1, keepdim=True) + epsilon)).detach()
    state_perturbed = model.forward_embeds(embed + noise)
    return F.kl_div(F.log_softmax(state_perturbed, -1), F.softmax(state.detach(), -1), reduction="batchmean")


if __name__ == "__main__":
    model = Classifier()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids, labels = torch.randint(0, 40, (4, 6)), torch.randint(0, 3, (4,))
    state = model(ids)
    loss = F.cross_entropy(state, labels) + 0.02 * smart_regularizer(model, ids, state)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())

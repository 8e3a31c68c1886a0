import torch.nn.functional as F


def train_step(accelerator, model, optimizer, batch, aux_weight=0.5):
    x, y, aux_target = batch
    logits, aux = model(x)
    main_loss = F.cross_entropy(logits, y)
    aux_loss = aux_weight * F.mse_loss(aux, aux_target)
    optimizer.zero_grad()
    accelerator.backward(main_loss, retain_graph=True)
    accelerator.backward(aux_loss)
    optimizer.step()
    return main_loss.item(), aux_loss.item()

def sam_update(model, optimizer, criterion, inputs, targets):
    """Two backward passes per batch: at w, then at the perturbed w + e(w)."""
    loss = criterion(model(inputs), targets)
    loss.backward(retain_graph=True)
    optimizer.first_step(zero_grad=True)
    criterion(model(inputs), targets).backward()
    optimizer.second_step(zero_grad=True)
    return loss.item()

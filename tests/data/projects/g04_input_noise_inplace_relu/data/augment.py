import torch


def add_input_noise_(batch, std, generator):
    """Gaussian input noise (Pi-model), written into the batch itself: it is data, not a graph value."""
    batch.add_(torch.randn(batch.shape, generator=generator) * std)
    return batch


def random_translate_(batch, generator, max_shift=1):
    shift = int(torch.randint(-max_shift, max_shift + 1, (1,), generator=generator))
    batch.copy_(torch.roll(batch, shifts=shift, dims=-1))
    return batch

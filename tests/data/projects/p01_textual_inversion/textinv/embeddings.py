"""Placeholder-token handling, after diffusers' examples/textual_inversion/textual_inversion.py."""
import torch
import torch.nn as nn


def add_placeholder_token(text_encoder, init_token_id):
    """Grow the embedding table by one row initialised from ``init_token_id``; return its id."""
    old = text_encoder.get_input_embeddings()
    new = nn.Embedding(old.num_embeddings + 1, old.embedding_dim)
    with torch.no_grad():
        new.weight[:-1] = old.weight
        new.weight[-1] = old.weight[init_token_id]
    text_encoder.set_input_embeddings(new)
    return new.num_embeddings - 1


def frozen_rows_mask(num_embeddings, placeholder_id):
    mask = torch.ones(num_embeddings, dtype=torch.bool)
    mask[placeholder_id] = False
    return mask


def restore_frozen_rows(text_encoder, orig_weights, mask):
    """Only the placeholder row may learn: put every other row back after the step."""
    weight = text_encoder.get_input_embeddings().weight
    weight[mask] = orig_weights[mask]

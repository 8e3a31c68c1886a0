"""Denoising queries (after DN-DETR's dn_components.py): noised ground-truth boxes are embedded
and put in front of the learnable object queries."""
import torch


def noised_box_queries(boxes, label_enc, labels, noise_scale, generator):
    noised = boxes + (torch.rand(boxes.shape, generator=generator) - 0.5) * noise_scale
    return torch.cat([label_enc(labels), noised], dim=-1)


def prepare_for_dn(query, dn_queries):
    n = dn_queries.shape[1]
    query[:, :n] = dn_queries[:, :, : query.shape[-1]]
    return query

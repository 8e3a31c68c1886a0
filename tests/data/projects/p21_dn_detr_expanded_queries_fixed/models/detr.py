import torch.nn as nn

from .dn_components import noised_box_queries, prepare_for_dn


class TinyDETR(nn.Module):
    def __init__(self, num_queries, hidden_dim, num_classes):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden_dim, 4, 4), nn.ReLU())
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.label_enc = nn.Embedding(num_classes + 1, hidden_dim - 4)
        self.decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(hidden_dim, 2, 32, dropout=0.0, batch_first=True), 1)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = nn.Linear(hidden_dim, 4)

    def forward(self, images, targets=None, generator=None):
        memory = self.backbone(images).flatten(2).transpose(1, 2)
        B = images.shape[0]
        query = self.query_embed.weight.unsqueeze(0).repeat(B, 1, 1)
        if targets is not None:
            dn = noised_box_queries(targets["boxes"], self.label_enc, targets["labels"], 0.4, generator)
            query = prepare_for_dn(query, dn)
        hs = self.decoder(query, memory)
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


def build(args):
    return TinyDETR(args.num_queries, args.hidden_dim, args.num_classes)

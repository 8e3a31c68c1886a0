import argparse

import torch
import torch.nn.functional as F

from models import build_model


def get_args_parser():
    parser = argparse.ArgumentParser("DN-DETR-like training", add_help=False)
    parser.add_argument("--num_queries", default=6, type=int)
    parser.add_argument("--hidden_dim", default=12, type=int)
    parser.add_argument("--num_classes", default=3, type=int)
    parser.add_argument("--lr", default=1e-4, type=float)
    return parser


def main(args):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = build_model(args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    images = torch.randn(2, 3, 16, 16)
    targets = {"boxes": torch.rand(2, 2, 4), "labels": torch.randint(0, args.num_classes, (2, 2))}
    logits, boxes = model(images, targets, gen)
    loss = F.cross_entropy(logits[:, :2].reshape(-1, args.num_classes + 1), targets["labels"].reshape(-1))
    loss = loss + F.l1_loss(boxes[:, :2], targets["boxes"])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("DN-DETR-like training", parents=[get_args_parser()])
    main(parser.parse_args())

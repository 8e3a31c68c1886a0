import torch


def create_optimizer(args, model):
    params = [p for p in model.parameters() if p.requires_grad]
    if args.opt == "sgd":
        return torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    return torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)

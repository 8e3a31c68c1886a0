import torch
from torch.optim.swa_utils import AveragedModel

from det.loss import BinaryFocalLoss
from det.model import ObjectnessNet
from swa.loop import evaluate, train_epoch


def main():
    torch.manual_seed(0)
    model = ObjectnessNet(10)
    swa_model = AveragedModel(model)
    criterion = BinaryFocalLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = [(torch.randn(16, 10), (torch.rand(16) > 0.5).float()) for _ in range(3)]
    train_epoch(model, swa_model, criterion, optimizer, data)
    print(evaluate(swa_model, criterion, data))


if __name__ == "__main__":
    main()

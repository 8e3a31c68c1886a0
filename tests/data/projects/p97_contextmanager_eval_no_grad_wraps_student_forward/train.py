import torch
import torch.nn as nn

from engine.trainer import DistillTrainer


def main():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))
    student = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 5))
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    trainer = DistillTrainer(student, teacher, opt)
    for _ in range(3):
        print(trainer.train_step(torch.randn(16, 8)))


if __name__ == "__main__":
    main()

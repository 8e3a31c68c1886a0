import torch

import kd


def main():
    torch.manual_seed(0)
    student = kd.Student.from_config({"hidden": 16})
    teacher = kd.Teacher.from_config({"hidden": 64})
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05)
    trainer = kd.KDTrainer(student, teacher, optimizer)
    for i in range(3):
        batch = (torch.randn(8, 12), torch.randint(0, 3, (8,)))
        print(i, trainer.train_step(batch))


if __name__ == "__main__":
    main()

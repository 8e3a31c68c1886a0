import train

CONFIG = {"seed": 0, "vocab": 16, "hidden": 12, "lr": 1e-3, "iters": 2}

if __name__ == "__main__":
    train.train(CONFIG)

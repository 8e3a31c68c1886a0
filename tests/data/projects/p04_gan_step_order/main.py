from train import CONFIG, run

if __name__ == "__main__":
    run(CONFIG)

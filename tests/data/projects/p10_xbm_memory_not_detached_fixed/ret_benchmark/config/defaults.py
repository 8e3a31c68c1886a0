_C = {
    "MODEL": {"BACKBONE": "mlp", "EMBED_DIM": 8},
    "XBM": {"ENABLE": True, "SIZE": 32, "START_ITERATION": 1, "WEIGHT": 1.0},
    "LOSSES": {"NAME": "contrastive_loss", "MARGIN": 0.5},
    "SOLVER": {"OPTIMIZER": "SGD", "BASE_LR": 0.01, "MAX_ITERS": 4},
}

# Model / optimisation settings, read by lib/config.py with exec()
model = dict(
    hidden=[32, 32],
    norm_act="Tanh",
    act="Hardtanh",
    act_kwargs=dict(min_val=-0.5, max_val=0.5, inplace=True),
)
optim = dict(lr=1e-3, weight_decay=0.0)
train = dict(iters=3, batch_size=8)

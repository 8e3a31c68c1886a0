model = dict(
    type="GatedBlock",
    channels=4,
    gate_act=dict(type="Hardtanh", min_val=0.0, max_val=1.0, inplace=True),
)
schedule = dict(iters=2, lr=0.05)

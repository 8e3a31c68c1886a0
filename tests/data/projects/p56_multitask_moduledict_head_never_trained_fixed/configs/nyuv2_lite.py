"""Multi-task config (NYUv2-like): one decoder head per task, each loss weighted."""

TASKS = ["semseg", "depth", "normals"]

config = dict(
    backbone=dict(in_dim=12, width=24),
    heads=dict(semseg=4, depth=1, normals=3),
    loss_weights=dict(semseg=1.0, depth=1.0, normals=1.0),
    optimizer=dict(lr=1e-2, momentum=0.9),
    iters=3,
)

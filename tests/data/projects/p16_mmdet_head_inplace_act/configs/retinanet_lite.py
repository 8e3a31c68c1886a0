model = dict(
    type="SingleStageDetector",
    backbone=dict(type="TinyBackbone", out_channels=8),
    bbox_head=dict(
        type="SharedConvHead",
        in_channels=8,
        num_classes=3,
        act_cfg=dict(type="ReLU", inplace=True),
    ),
)
optimizer = dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=1e-4)
total_iters = 2

model = dict(
    head=dict(type="RetinaHead", in_channels=4, num_classes=3),
    loss_cls=dict(type="FocalLoss", gamma=2.0, alpha=0.25),
)
optimizer = dict(lr=0.01, momentum=0.9)

import torch


@torch.no_grad()
def bbox_decode(pred, anchors):
    """Network outputs -> (x, y, w, h) boxes, as in YOLOv5's build_targets / loss."""
    pxy = pred[..., :2].sigmoid() * 2 - 0.5
    pwh = (pred[..., 2:4].sigmoid() * 2) ** 2 * anchors
    return torch.cat((pxy, pwh), -1)


def bbox_iou(box1, box2, eps=1e-7):
    b1_x1, b1_x2 = box1[..., 0] - box1[..., 2] / 2, box1[..., 0] + box1[..., 2] / 2
    b1_y1, b1_y2 = box1[..., 1] - box1[..., 3] / 2, box1[..., 1] + box1[..., 3] / 2
    b2_x1, b2_x2 = box2[..., 0] - box2[..., 2] / 2, box2[..., 0] + box2[..., 2] / 2
    b2_y1, b2_y2 = box2[..., 1] - box2[..., 3] / 2, box2[..., 1] + box2[..., 3] / 2
    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    union = box1[..., 2] * box1[..., 3] + box2[..., 2] * box2[..., 3] - inter + eps
    return inter / union

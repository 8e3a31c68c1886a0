# source: https://github.com/Okery/PyTorch-Simple-MaskRCNN/issues/15 and https://github.com/Jakaria08/EESRGAN/issues/25 ("A view was created in no_grad mode and is being modified inplace with grad mode enabled"): mask/feature pasting writes into slices of a canvas whose views were taken inside a no_grad helper
# family: C
# expect: ok
# line: 13, 14, 28
# fix: (fixed version of C200_roi_canvas_windows_made_under_no_grad.py) write through slices taken at write time with grad on (canvas[:, :, y:y + s, x:x + s] = feat); only moving the view creation out of no_grad is not enough, see C203
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.no_grad()
def make_canvas(n, c, h, w, boxes, size):
    canvas = torch.zeros(n, c, h, w)
    return canvas, [canvas[:, :, y:y + size, x:x + size] for y, x in boxes]


class RoIPaste(nn.Module):
    def __init__(self, c=4, size=4):
        super().__init__()
        self.roi_head = nn.Conv2d(c, c, 3, padding=1)
        self.size = size

    def forward(self, roi_feats, boxes, out_hw=(12, 12)):
        canvas, windows = make_canvas(roi_feats.shape[1], roi_feats.shape[2], *out_hw, boxes, self.size)
        for (y, x), feat in zip(boxes, roi_feats):
            canvas[:, :, y:y + self.size, x:x + self.size] = self.roi_head(feat)
        return canvas


if __name__ == "__main__":
    model = RoIPaste()
    rois = torch.randn(3, 2, 4, 4, 4)
    canvas = model(rois, [(0, 0), (4, 4), (8, 2)])
    loss = F.mse_loss(canvas, torch.zeros_like(canvas))
    loss.backward()
    print("loss", loss.item())

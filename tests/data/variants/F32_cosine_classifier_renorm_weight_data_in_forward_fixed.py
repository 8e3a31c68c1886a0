# source: NormFace / cosine-classifier heads that re-normalise the class weights through .data inside forward, after the weight has been used (meant for the next step)
# family: F
# expect: ok
# verify: (fixed: the weight is renormalised before it is used) previously the matmul saved the weight for the input gradient; the .data copy does not bump the version counter, so backward silently uses the renormalised weight. The feature gradient is compared with a run that renormalises after backward and MISMATCH is printed
# line: 23  (backward: 37)
# fix: (fixed version of F32_cosine_classifier_renorm_weight_data_in_forward.py) renormalise after the backward / optimizer step (or under torch.no_grad() before the weight is used)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CosineClassifier(nn.Module):
    def __init__(self, d=8, n_cls=5, scale=10.0, renorm_in_forward=True):
        super().__init__()
        torch.manual_seed(0)
        self.W = nn.Parameter(torch.randn(d, n_cls))
        self.scale = scale
        self.renorm_in_forward = renorm_in_forward

    def renorm_(self):
        self.W.data.copy_(F.normalize(self.W.data, dim=0))

    def forward(self, feat):
        if self.renorm_in_forward:
            with torch.no_grad():
                self.renorm_()
        return self.scale * F.normalize(feat, dim=1) @ self.W


def feature_grad(renorm_in_forward):
    head = CosineClassifier(renorm_in_forward=renorm_in_forward)
    feat = torch.randn(6, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    if not renorm_in_forward:
        head.renorm_()
    F.cross_entropy(head(feat), torch.tensor([0, 1, 2, 3, 4, 0])).backward()
    return feat.grad


if __name__ == "__main__":
    got, ref = feature_grad(True), feature_grad(False)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())

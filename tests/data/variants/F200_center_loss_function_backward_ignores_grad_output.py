# source: https://github.com/jxgu1016/MNIST_center_loss_pytorch/pull/3 (review of the custom CenterLoss Function's backward: "return grad_output*diff, None, center_grads --> return -grad_output * diff, None, center_grads"); a backward that returns the local derivative without multiplying by grad_output ignores the loss weight and the chain rule
# family: F
# expect: silent
# verify: the feature gradient of the weighted loss is compared with autograd's gradient of the same center loss written with tensor ops
# line: 27
# fix: multiply the local derivative by grad_output: return grad_output * diff / batch_size, None, grad_centers / batch_size
import torch
import torch.nn as nn

torch.manual_seed(0)


class CenterLossFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, feature, label, centers):
        ctx.save_for_backward(feature, label, centers)
        centers_batch = centers.index_select(0, label)
        return (feature - centers_batch).pow(2).sum() / 2.0 / feature.size(0)

    @staticmethod
    def backward(ctx, grad_output):
        feature, label, centers = ctx.saved_tensors
        centers_batch = centers.index_select(0, label)
        diff = feature - centers_batch
        counts = torch.ones(centers.size(0)).index_add(0, label, torch.ones(label.size(0)))
        grad_centers = torch.zeros_like(centers).index_add(0, label, -diff) / counts[:, None]
        return diff / feature.size(0), None, grad_centers / feature.size(0)


class CenterLoss(nn.Module):
    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, feat, label):
        return CenterLossFunc.apply(feat, label, self.centers)


if __name__ == "__main__":
    center_loss = CenterLoss(4, 2)
    feat = torch.randn(8, 2, requires_grad=True)
    label = torch.randint(0, 4, (8,))
    loss_weight = 0.01
    (got,) = torch.autograd.grad(loss_weight * center_loss(feat, label), feat)
    ref_loss = (feat - center_loss.centers[label]).pow(2).sum() / 2.0 / feat.size(0)
    (ref,) = torch.autograd.grad(loss_weight * ref_loss, feat)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH: backward ignored grad_output (the loss weight)")

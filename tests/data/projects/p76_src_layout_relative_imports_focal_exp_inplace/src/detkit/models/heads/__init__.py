from .cls_head import ClsHead

HEADS = {"cls": ClsHead}

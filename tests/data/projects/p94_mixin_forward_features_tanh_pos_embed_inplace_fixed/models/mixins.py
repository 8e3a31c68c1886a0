class FeatureMixin:
    def forward_features(self, x):
        x = self.stem(x)
        x = x + self.pos_embed
        for blk in self.blocks:
            x = x + blk(x)
        return x

    def forward_head(self, x):
        return self.head(x.mean(1))

def critic_loss(d_real, d_fake):
    return d_fake.mean() - d_real.mean()


def generator_loss(d_fake):
    return -d_fake.mean()

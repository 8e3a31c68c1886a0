ACT = "relu6"
ACT_KWARGS = dict(inplace=False)

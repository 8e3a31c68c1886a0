from .hidden import repackage_hidden

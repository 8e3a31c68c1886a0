from .context import evaluating

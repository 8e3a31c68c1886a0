from .resmlp import ResMLP

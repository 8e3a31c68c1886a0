"""The analysis engine: abstract autograd state over `ast`, op knowledge, the Diagnostic model.

Must not import lsprotocol, pygls, libcst or torch.
"""
from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Related, Severity, Span

__all__ = ["Diagnostic", "Edit", "Fix", "Related", "Severity", "Span"]

"""How a job running in a worker is stopped: the exception raised in its thread, and how to
recognise it when library code has wrapped it. Shared by the worker (which raises and reports
it) and the jobs (which must not take it for one broken fix)."""
from __future__ import annotations

from typing import Optional


class JobCancelled(BaseException):
    """Raised inside a worker's job thread when the server cancels the job (a BaseException:
    the engine's ``except Exception`` handlers must not swallow it)."""


def cancellation_in(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a cancel: library code may wrap the exception it
    was interrupted by (seen in CI: a cancel landing inside libcst's import surfaced as
    ``RuntimeError: Error calling __set_name__``). Python drops the modules whose import was
    interrupted, so the next job imports them afresh."""
    seen = set()
    link: Optional[BaseException] = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, JobCancelled):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False

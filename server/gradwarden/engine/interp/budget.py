"""What the analysis of one definition may cost, and counters of what the engine did.

The interpreter is path-sensitive and inlines calls, so its work is not linear in the size of
the code: joins at loop heads and branch exits (statements.py) keep it polynomial in the
nesting depth, and this budget is the backstop for whatever still grows. Each definition
analysed on its own (a function, a method, the module's top-level code) gets its own
allotment of statement visits; past it, that definition's analysis stops, one information
note says so on it, and every other definition is analysed as usual. Before that note, a
definition (or a call the module's code makes: a script's ``main()``, a notebook cell's
training function) that ran out is run once more coarsely, within a third of an allotment:
every block's paths joined at each statement, a known sequence looped over as one of unknown
length (``Interpreter.analyse_alone``, ``Calls.coarse_retry``). What explodes in a training
loop is paths times loops times inlined calls; one path through the same code is a fraction
of that work, and a hazard on every path is still met (a join keeps what each path holds).

``Work`` counts what the engine did (statement visits, paths held, joins); tests assert on
these counts rather than on wall-clock time, and the benchmark prints them beside the times.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from gradwarden.engine.diagnostic import Span

# Statement visits allowed to one definition's analysis (calls it inlines included): a few
# seconds at worst. The labelled cases need at most 1,400; a nest of 40 for/if/while levels
# about 19,000. A definition past it is pathological for this analysis, not merely large.
STATEMENTS_PER_DEFINITION = 30_000
# A definition that runs out of its allotment is run once more coarsely (see above) within
# this fraction of it: one definition costs at most 4/3 of an allotment before its GW002.
RETRY_SHARE = 3


class BudgetExceeded(Exception):
    """The definition being analysed used up its allotment (caught where it began).

    ``at`` is where it ran out, filled in by the innermost block that was running (the
    interpreter's ``exec_block``): the statement, how many paths that block was running, how
    many loops enclosed it and which calls were inlined on the way to it."""

    at: Optional["StopPoint"] = None


@dataclass(frozen=True)
class StopPoint:
    """Where an analysis ran out of work, and what had grown there."""

    span: Span  # the statement being run (code of another module: the call in this file that reached it)
    module: str  # the other module's file, when the statement is in one ("" in this file)
    paths: int  # paths running through that block together
    loops: int  # loops enclosing it (in the function and the calls inlined into it)
    calls: Tuple[str, ...]  # the functions inlined on the way to it, outermost first


@dataclass
class Work:
    """Counters over one interpreter's life (all definitions together)."""

    statements: int = 0  # statement visits (one per path a statement runs on)
    peak_paths: int = 0  # the most paths one block held at once
    joins: int = 0  # path joins (past the path cap, at loop heads)
    stopped: List[Tuple[str, Span]] = field(default_factory=list)  # definitions whose analysis stopped early


class Budget:
    """The allotment of the definition being analysed; ``tick`` counts one statement visit."""

    def __init__(self, limit: Optional[int] = None) -> None:
        self.limit = STATEMENTS_PER_DEFINITION if limit is None else limit
        self.work = Work()
        self._start = 0
        self.label = ""  # what is being analysed, for the note
        self.span: Optional[Span] = None

    def begin(self, label: str, span: Span) -> Tuple[int, str, Optional[Span]]:
        """Start the allotment of one definition; returns what ``end`` restores (a definition
        analysed while another one's analysis is suspended gets its own allotment too)."""
        saved = (self._start, self.label, self.span)
        self._start = self.work.statements
        self.label, self.span = label, span
        return saved

    def end(self, saved: Tuple[int, str, Optional[Span]]) -> None:
        used = self.work.statements - self._start
        self._start, self.label, self.span = saved
        self._start += used  # the suspended definition is not charged for the nested one

    def restart(self) -> None:
        """A fresh allotment for the definition being analysed (after one of its calls was
        given up: the rest of its code still gets analysed)."""
        self._start = self.work.statements

    def tick(self) -> None:
        self.work.statements += 1
        if self.work.statements - self._start > self.limit:
            raise BudgetExceeded()

    def used(self) -> int:
        return self.work.statements - self._start

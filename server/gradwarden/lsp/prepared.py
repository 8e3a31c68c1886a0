"""What the server keeps prepared for hover, per unit: the hover tables of the last
``MAX_HOVER_TABLES`` units (tens of kB to a MB each), each for one generation (one text), and
the background tasks (``prefetch.py``) that fill them and the fix cache."""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.hover_table import HoverTable

MAX_HOVER_TABLES = 4


class Prepared:
    """The hover tables of the last few units, each for one generation (one text), and the
    background tasks that fill them and the fix cache."""

    def __init__(self) -> None:
        self.hover_tables: "OrderedDict[str, Tuple[int, HoverTable]]" = OrderedDict()
        self.timers: Dict[str, asyncio.TimerHandle] = {}
        self.timer_results: Dict[str, Any] = {}  # unit -> the result its pending timer will prepare
        # unit -> ((result generation, settings generation), the task preparing that state)
        self.tasks: Dict[str, Tuple[Tuple[int, int], "asyncio.Task[None]"]] = {}
        self.tables_built = 0

    def hover_table(self, key: str, generation: int) -> Optional["HoverTable"]:
        found = self.hover_tables.get(key)
        if found is None or found[0] != generation:
            return None
        self.hover_tables.move_to_end(key)
        return found[1]

    def store_hover_table(self, key: str, generation: int, table: "HoverTable") -> None:
        self.hover_tables[key] = (generation, table)
        self.hover_tables.move_to_end(key)
        self.tables_built += 1
        while len(self.hover_tables) > MAX_HOVER_TABLES:
            self.hover_tables.popitem(last=False)

    def ready(self) -> Dict[str, int]:
        """unit -> the generation its hover table is for (serverStatus, tests)."""
        return {k: g for k, (g, _) in self.hover_tables.items()}

    def cancel(self, key: str) -> None:
        timer = self.timers.pop(key, None)
        self.timer_results.pop(key, None)
        if timer is not None:
            timer.cancel()
        running = self.tasks.pop(key, None)
        if running is not None and not running[1].done():
            running[1].cancel()

    def forget(self, key: str) -> None:
        self.cancel(key)
        self.hover_tables.pop(key, None)

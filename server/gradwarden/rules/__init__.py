"""The catalog of rules: one class per hazard (see base.Rule)."""
from __future__ import annotations

from typing import Dict, List, Optional, Type

from gradwarden.rules.base import Rule
from gradwarden.rules.catalog import RULES

_BY_CODE: Dict[str, Type[Rule]] = {r.code: r for r in RULES}


def all_rules() -> List[Type[Rule]]:
    return list(RULES)


def get_rule(code: str) -> Optional[Type[Rule]]:
    return _BY_CODE.get(code.upper())


__all__ = ["Rule", "all_rules", "get_rule"]

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """A detector's hit: which rule, and where in the normalised text."""

    rule: str
    start: int
    end: int


@dataclass(frozen=True)
class Detector:
    family: str
    find: Callable[[str], list[Span]]
    # Injection phrases are tolerated in conversation stores (DESIGN §3).
    tolerated_in_conversations: bool = False

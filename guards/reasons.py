"""Why an entry was not reused: the first guard it failed, with the values that failed it.

RecompileReason(0, "s0 <= 1024", (("s0", 1500, "L['idx'].size(1)"),), "model.py:57")
prints  entry 0: s0 <= 1024 failed: s0 = 1500 (L['idx'].size(1), model.py:57)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RecompileReason:
    """Entry `entry_index` failed `guard_text`; `failing_values` are (name, value, source)."""

    entry_index: int
    guard_text: str
    failing_values: tuple[tuple[str, object, str], ...] = ()
    where: str | None = None

    def describe(self) -> str:
        """The reason without the entry number: `s0 <= 1024 failed: s0 = 1500 (...)`."""
        return f"{self.guard_text} failed: {describe_values(self.failing_values, self.where)}"

    def __str__(self) -> str:
        return f"entry {self.entry_index}: {self.describe()}"

    def to_json(self) -> dict:
        return {
            "entry_index": self.entry_index,
            "guard": self.guard_text,
            "values": [
                {"name": name, "value": _jsonable(value), "source": source}
                for name, value, source in self.failing_values
            ],
            "where": self.where,
        }


def describe_values(values, where: str | None) -> str:
    """`s0 = 1500 (L['idx'].size(1), model.py:57)`; several values are comma separated."""
    parts = []
    for name, value, source in values:
        if name == source:
            parts.append(f"{name} = {value}")
        else:
            parts.append(f"{name} = {value} ({source})")
    text = ", ".join(parts) or "(no values)"
    if not where:
        return text
    if len(parts) == 1 and text.endswith(")"):
        return f"{text[:-1]}, {where})"
    return f"{text} at {where}"


def _jsonable(value):
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)

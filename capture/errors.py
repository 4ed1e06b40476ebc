"""Capture's errors: CaptureError for bugs and misuse, Unsupported for graph breaks.

    raise Unsupported("data-dependent branch on a tensor", where="model.py:41", line="if x.sum():")

An `Unsupported` makes the driver run the frame eagerly and record the break for `explain`;
with `fullgraph=True` it reaches the user, showing the reason, file:line and source line.
"""

from __future__ import annotations

from symbolic import SymcError


class CaptureError(SymcError):
    """Capture met a program it cannot translate, or an internal invariant failed.

    Graph breaks are the subclass `Unsupported`; anything else is a bug in capture/.
    """


class Unsupported(CaptureError):
    """A construct capture does not translate (a graph break): the frame runs eagerly instead.

    `reason` says what was found; `where` is the user's file:line and `line` its source text.
    Rewrite the construct, or accept the break (`symc.explain` lists every break).
    `resumable` False keeps the whole frame eager (a break no split of the frame would avoid).
    """

    resumable = True

    def __init__(self, reason: str, where: str | None = None, line: str | None = None):
        self.reason = reason
        self.where = where
        self.line = line
        super().__init__(self._message())

    def _message(self) -> str:
        text = self.reason
        if self.where:
            text += f" at {self.where}"
        if self.line:
            text += f"\n    {self.line.strip()}"
        return text

    def locate(self, where: str | None, line: str | None) -> Unsupported:
        """Fill in the location once (the innermost frame that saw the error wins)."""
        if self.where is None and where is not None:
            self.where, self.line = where, line
            self.args = (self._message(),)
        return self


class MissingKey(Unsupported):
    """A lookup that eager answers with KeyError (a missing dict key).

    `Mapping.get` and `in` over a Python mapping catch it and take the default; reaching a
    `try` block of the captured code, or the top, it is an ordinary graph break.
    """


class Raised(Unsupported):
    """A `raise` of a known exception (`raise IndexError(...)`) outside any try block of its
    frame. A caller that catches exactly that exception in eager (the sequence protocol's
    IndexError: capture.objects) takes it; anywhere else it is an ordinary graph break."""

    def __init__(self, exception: BaseException, where: str | None = None,
                 line: str | None = None):
        self.exception = exception
        super().__init__(f"raise of {type(exception).__name__} (exceptions are graph breaks)",
                         where, line)

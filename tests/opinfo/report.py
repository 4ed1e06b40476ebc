"""Regenerate the OpInfo conformance numbers: `python -m tests.opinfo.report`.

Runs every selected OpInfo entry through each backend (tests/opinfo/conformance.py), writes
bench/results/opinfo_conformance.json (per entry, backend and phase: pass, or what differed) and
prints the README's table. `--known` also prints the failures as rows for known_failures.py.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from tests.opinfo.conformance import BACKENDS, MAX_SAMPLES, PHASES, check, opinfo_entries

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "opinfo_conformance.json"


def _status(reason: str | None) -> str:
    if reason is None:
        return "pass"
    return "skipped" if reason.startswith("skipped") else "fail"


def table(data: dict) -> str:
    """Markdown: entries checked, passing forward and backward, per backend."""
    lines = ["| backend | OpInfo entries checked | forward pass | backward pass "
             "| backward checked |",
             "|---|---|---|---|---|"]
    for backend in data["backends"]:
        rows = [r[backend] for r in data["entries"].values()]
        fwd = sum(r["forward"]["status"] == "pass" for r in rows)
        bwd_rows = [r for r in rows if r["backward"]["status"] != "skipped"]
        bwd = sum(r["backward"]["status"] == "pass" for r in bwd_rows)
        lines.append(f"| {backend} | {len(rows)} | {fwd} | {bwd} | {len(bwd_rows)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="entry names (default: all)")
    parser.add_argument("--known", action="store_true", help="print failures as table rows")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--merge", action="store_true", help="update --only's rows in --out")
    args = parser.parse_args(argv)
    entries = opinfo_entries()
    names = args.only or sorted(entries)
    start = time.perf_counter()
    data = {"date": datetime.now(UTC).strftime("%Y-%m-%d"), "torch": torch.__version__,
            "python": platform.python_version(), "machine": platform.machine(),
            "max_samples": MAX_SAMPLES, "dtype": "float32", "device": "cpu",
            "backends": list(BACKENDS), "entries": {}}
    if args.merge:
        old = json.loads(args.out.read_text())
        data["entries"], data["seconds"] = old["entries"], old.get("seconds")
    for name in names:
        data["entries"][name] = {}
        for backend in BACKENDS:
            result = check(entries[name], backend)
            data["entries"][name][backend] = {
                phase: {"status": _status(result.phase(phase)), "reason": result.phase(phase)}
                for phase in PHASES}
            bad = [p for p in PHASES if _status(result.phase(p)) == "fail"]
            print(f"{name:40s} {backend:10s} {'FAIL ' + ','.join(bad) if bad else 'ok'}",
                  file=sys.stderr, flush=True)
    if not args.merge:
        data["seconds"] = round(time.perf_counter() - start, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(table(data))
    if args.known:
        for name, per in data["entries"].items():
            for backend, phases in per.items():
                for phase, r in phases.items():
                    if r["status"] == "fail":
                        print(f"    ({name!r}, {backend!r}, {phase!r}): {r['reason'][:90]!r},")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Regenerate the OpInfo coverage numbers: `python -m tests.opinfo.report`.

Runs every OpInfo entry of op_db with float32 samples through each backend
(tests/opinfo/conformance.py), writes bench/results/opinfo_coverage.json (per entry, backend and
phase: pass / skipped / break / fallback / mismatch / error, with the reason) and prints the
tables: counts per backend and phase, and the graph breaks grouped by reason.

    python -m tests.opinfo.report --only nn.functional.elu nn.functional.selu --merge
    python -m tests.opinfo.report --known      # regenerate tests/opinfo/known_failures.py
    python -m tests.opinfo.report --readme     # rewrite README's generated coverage table
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import torch

from tests.opinfo.conformance import (
    BACKENDS,
    MAX_SAMPLES,
    PHASES,
    STATUSES,
    check,
    opinfo_entries,
    status,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "opinfo_coverage.json"
KNOWN = Path(__file__).resolve().parent / "known_failures.py"
README = ROOT / "README.md"
BEGIN, END = "<!-- opinfo-coverage:begin -->", "<!-- opinfo-coverage:end -->"


def break_kind(reason: str) -> str:
    """A graph break's reason without the op it names: 'no decomposition for <op>'."""
    text = reason.removeprefix("graph break: ").removeprefix("fallback: ")
    text = re.split(r"[;\n]", text, maxsplit=1)[0]
    text = re.sub(r"no decomposition for \S+", "no decomposition for <op>", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "<...>", text)
    text = re.sub(r"\b(torch|operator)\.[\w.]+", "<op>", text)
    text = re.sub(r"\d+", "N", text)
    return text[:90]


def counts(data: dict) -> dict:
    """backend -> phase -> status -> number of entries."""
    out = {}
    for backend in data["backends"]:
        out[backend] = {}
        for phase in PHASES:
            c = Counter(r[backend][phase]["status"] for r in data["entries"].values()
                        if backend in r)
            out[backend][phase] = {s: c.get(s, 0) for s in STATUSES}
    return out


def table(data: dict) -> str:
    """Markdown: per backend, entries; forward and backward pass / break / fallback / other."""
    lines = ["| backend | entries | forward pass | backward pass (of checked) | graph break "
             "| inductor fallback | mismatch (fwd/bwd) | error (fwd/bwd) |",
             "|---|---|---|---|---|---|---|---|"]
    for backend, per in counts(data).items():
        f, b = per["forward"], per["backward"]
        n = sum(f.values())
        checked = n - b["skipped"]
        lines.append(f"| {backend} | {n} | {f['pass']} ({100 * f['pass'] / max(n, 1):.1f}%) "
                     f"| {b['pass']} of {checked} | {f['break']} | {f['fallback']} "
                     f"| {f['mismatch']}/{b['mismatch']} | {f['error']}/{b['error']} |")
    return "\n".join(lines)


def both_phases(data: dict, backend: str) -> tuple[int, int]:
    """(entries passing forward and backward (or backward skipped), entries)."""
    rows = [r[backend] for r in data["entries"].values() if backend in r]
    ok = sum(r["forward"]["status"] == "pass" and r["backward"]["status"] in ("pass", "skipped")
             for r in rows)
    return ok, len(rows)


def break_table(data: dict, backend: str, top: int = 25) -> str:
    c = Counter(break_kind(r[backend]["forward"]["reason"]) for r in data["entries"].values()
                if backend in r and r[backend]["forward"]["status"] in ("break", "fallback"))
    lines = [f"| graph break / fallback reason ({backend}) | entries |", "|---|---|"]
    lines += [f"| {kind} | {n} |" for kind, n in c.most_common(top)]
    return "\n".join(lines)


def summary(data: dict) -> str:
    parts = [table(data), ""]
    for backend in data["backends"]:
        ok, n = both_phases(data, backend)
        parts.append(f"{backend}: {ok} of {n} entries ({100 * ok / max(n, 1):.1f}%) compile with "
                     f"no graph break and match eager forward and backward")
    parts += ["", break_table(data, data["backends"][-1])]
    return "\n".join(parts)


def known_rows(data: dict) -> str:
    """known_failures.py's text: every entry, backend and phase that does not pass."""
    rows = []
    for name in sorted(data["entries"]):
        for backend, phases in sorted(data["entries"][name].items()):
            for phase, r in phases.items():
                if r["status"] not in ("pass", "skipped"):
                    reason = " ".join(r["reason"].split())[:160]
                    rows.append(f"    ({name!r}, {backend!r}, {phase!r}):\n        {reason!r},")
    head = KNOWN.read_text().split("KNOWN_FAILURES", 1)[0]
    return (head + "KNOWN_FAILURES: dict[tuple[str, str, str], str] = {\n"
            + "\n".join(rows) + "\n}\n")


def readme_block(data: dict) -> str:
    return (f"{BEGIN}\n<!-- generated by `python -m tests.opinfo.report --readme` from "
            f"bench/results/opinfo_coverage.json; {data['date']}, torch {data['torch']}, "
            f"{data['device']}, {data['max_samples']} float32 samples per entry -->\n\n"
            f"{summary(data)}\n{END}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="entry names (default: all)")
    parser.add_argument("--match", help="regex over entry names (with or without --only)")
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--merge", action="store_true", help="update the selected rows in --out")
    parser.add_argument("--known", action="store_true", help="rewrite known_failures.py")
    parser.add_argument("--readme", action="store_true", help="rewrite README's table")
    parser.add_argument("--no-run", action="store_true", help="only read --out")
    parser.add_argument("--infer-breaks", action="store_true",
                        help="fill a backend's missing rows from another backend's graph breaks "
                             "(capture runs before the backend, so its breaks are the same)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="run the entries in this many processes (one shard each)")
    args = parser.parse_args(argv)
    if args.no_run:
        data = json.loads(args.out.read_text())
    elif args.jobs > 1:
        data = run_sharded(args)
    else:
        data = run(args)
    if args.infer_breaks:
        infer_breaks(data)
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(summary(data))
    if args.known:
        KNOWN.write_text(known_rows(data))
    if args.readme:
        text = README.read_text()
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        README.write_text(text[:start] + readme_block(data) + text[stop:])
    return 0


def infer_breaks(data: dict) -> None:
    """A row missing for one backend where another backend's row is a graph break: the same
    break (capture is backend-independent), marked `"inferred": true`."""
    for row in data["entries"].values():
        for backend in data["backends"]:
            if backend in row:
                continue
            source = next((row[b] for b in data["backends"] if b in row
                           and row[b]["forward"]["status"] == "break"
                           and not row[b]["forward"].get("inferred")), None)
            if source is not None:
                row[backend] = {p: {**r, "inferred": True} for p, r in source.items()}


def _selected(args) -> list[str]:
    names = args.only or sorted(opinfo_entries())
    if args.match:
        names = [n for n in names if re.search(args.match, n)]
    return names


def run_sharded(args) -> dict:
    """Split the entries over `args.jobs` processes (round robin), then merge their files."""
    names = _selected(args)
    shards = [names[k::args.jobs] for k in range(args.jobs)]
    outs = [args.out.with_suffix(f".shard{k}.json") for k in range(args.jobs)]
    procs = []
    for shard, out in zip(shards, outs, strict=True):
        if not shard:
            continue
        cmd = [sys.executable, "-m", "tests.opinfo.report", "--out", str(out), "--backends",
               *args.backends, "--only", *shard]
        procs.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL), out))
    data = json.loads(args.out.read_text()) if args.merge and args.out.exists() else None
    for proc, out in procs:
        proc.wait()
        part = json.loads(out.read_text())
        out.unlink()
        if data is None:
            data = part
        else:
            for name, row in part["entries"].items():
                data["entries"].setdefault(name, {}).update(row)
            data["backends"] = [b for b in BACKENDS if b in {*data["backends"],
                                                             *part["backends"]}]
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


def run(args) -> dict:
    entries = opinfo_entries()
    names = _selected(args)
    start = time.perf_counter()
    data = {"date": datetime.now(UTC).strftime("%Y-%m-%d"), "torch": torch.__version__,
            "python": platform.python_version(), "machine": platform.machine(),
            "max_samples": MAX_SAMPLES, "dtype": "float32", "device": "cpu",
            "backends": list(args.backends), "entries": {}}
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text())
        data["entries"], data["seconds"] = old["entries"], old.get("seconds")
        data["backends"] = [b for b in BACKENDS if b in {*old["backends"], *args.backends}]
    for name in names:
        row = data["entries"].setdefault(name, {})
        for backend in args.backends:
            try:
                result = check(entries[name], backend)
                phases = {p: result.phase(p) for p in PHASES}
            except Exception as e:  # noqa: BLE001 - the harness itself failed on this entry
                phases = dict.fromkeys(PHASES, f"harness: raised {type(e).__name__}: {e}"[:300])
            row[backend] = {p: {"status": status(r), "reason": r} for p, r in phases.items()}
            bad = [f"{p}:{row[backend][p]['status']}" for p in PHASES
                   if row[backend][p]["status"] not in ("pass", "skipped")]
            print(f"{name:40s} {backend:10s} {' '.join(bad) or 'ok'}", file=sys.stderr,
                  flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    if not args.merge:
        data["seconds"] = round(time.perf_counter() - start, 1)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data


if __name__ == "__main__":
    raise SystemExit(main())

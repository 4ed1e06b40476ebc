#!/usr/bin/env bash
# The full OpInfo coverage run (every op_db entry with float32 samples, aot_eager and inductor,
# CPU samples) in parallel shards, then known_failures.py and the README table from its JSON.
#   scripts/opinfo_coverage.sh [jobs]      (default: the machine's CPU count)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${1:-$(nproc)}"
python -m tests.opinfo.report --jobs "$jobs" --known --readme

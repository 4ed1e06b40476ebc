"""The GPU test run (`make test-gpu`, `bash scripts/gpu_run.sh`): device-aware tests on CUDA.

    python3 scripts/gpu_tests.py --out DIR [--budget 480] [--workers 8] [--device cuda]

Runs the suites below with SYMC_TEST_DEVICE=cuda (CUDA tensors, real Triton), in phases, each a
pytest run with the summary plugin (tests/run_summary.py), then writes DIR/test_gpu_summary.json:
per phase and per file passed/failed/skipped, failures, device, torch/triton/python versions.
The budget is split over the phases; a phase that runs out is stopped and its partial summary
kept. Exit status: 0 when every phase finished without failures. Suites that do not exist in
this checkout are listed as missing, not errors (other branches add them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, share of the budget, paths, extra pytest args, extra environment)
PHASES = [
    ("regressions", 0.12, ["tests/symc/test_device_programs.py",
                           "tests/inductor/test_triton_dtypes.py",
                           "tests/capture/test_recompile_policy.py",
                           "tests/capture/test_objects.py",
                           "tests/symc/test_rng_state.py",
                           "tests/capture/test_contextmanager.py",
                           "tests/capture/test_if_conversion.py",
                           "tests/models/test_hf_use_cache.py"], [], {}),
    ("triton_kernels", 0.15, ["tests/inductor/test_triton_codegen.py",
                              "tests/inductor/test_triton_graphs.py",
                              "tests/inductor/test_triton_launch.py",
                              "tests/inductor/test_cuda_attention.py",
                              "tests/inductor/test_attention_views.py",
                              "tests/inductor/test_triton_tiled.py",
                              "tests/inductor/test_triton_online.py",
                              "tests/inductor/test_triton_index_width.py",
                              "tests/inductor/test_memory_plan.py",
                              "tests/inductor/test_kernel_dedupe.py",
                              "tests/inductor/test_regrouped_fusion.py",
                              "tests/inductor/test_error_flags.py"], [], {}),
    ("training", 0.15, ["tests/training", "tests/autograd_aot/test_training_runtime.py"], [], {}),
    ("fuzz_and_conformance", 0.22, ["tests/property/test_differential_fuzz.py",
                                    "tests/opinfo", "tests/test_opinfo.py"], [],
     # a third of the OpInfo entries (all 677 take ~190 s, more than the phase's share): the
     # others with SYMC_OPINFO_OFFSET=1 or 2 set for the run
     {"SYMC_FUZZ_EXAMPLES": "20", "SYMC_OPINFO_SHARE": "3",
      "SYMC_OPINFO_OFFSET": os.environ.get("SYMC_OPINFO_OFFSET", "0")}),
    # the bounds-checking debug mode (issue 18) on a share of the kernel tests
    ("debug_bounds", 0.05, ["tests/inductor/test_triton_graphs.py"], [],
     {"SYMC_DEBUG_BOUNDS": "1"}),
    # last: it takes what the phases before it left unused
    # the full-size default configs first: xdist hands out tests in order, and these are the
    # longest (a late start left them unfinished when the phase's time ran out)
    ("models", 0.31, ["tests/models/test_hf_default_configs.py",
                      "tests/models/test_models_compiled.py", "tests/models/test_hf.py"], [], {}),
]


def versions() -> dict:
    info = {"python": platform.python_version(), "machine": platform.node()}
    try:
        import torch
        info["torch"] = torch.__version__
        info["cuda_available"] = torch.cuda.is_available()
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["cuda"] = torch.version.cuda
    except Exception as e:  # noqa: BLE001 - reported, the run goes on
        info["torch"] = f"import failed: {e}"
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        info["triton"] = f"import failed: {e}"
    for name in ("z3", "bytecode", "transformers", "hypothesis"):
        try:
            mod = __import__(name)
            info[name] = (mod.get_version_string() if name == "z3"
                          else getattr(mod, "__version__", "?"))
        except Exception as e:  # noqa: BLE001
            info[name] = f"import failed: {e}"
    return info


def run_phase(name, paths, extra, env_extra, seconds, out, workers, device):
    present = [p for p in paths if os.path.exists(os.path.join(ROOT, p.split("::")[0]))]
    missing = sorted(set(paths) - set(present))
    result = {"paths": present, "missing": missing, "budget_s": round(seconds)}
    if not present:
        result["status"] = "nothing to run"
        return result
    summary = os.path.join(out, f"phase_{name}.json")
    env = dict(os.environ, SYMC_TEST_DEVICE=device, PYTHONUNBUFFERED="1", **env_extra)
    env.pop("TRITON_INTERPRET", None) if device == "cuda" else None
    per_test = int(min(seconds, 240))  # one hung test must not take the whole phase
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tests.run_summary",
           "--summary-json", summary, "-p", "no:cacheprovider", "--durations", "8", "--timeout", str(per_test),
           "-n", str(workers), *extra, *present]
    print(f"\n=== phase {name} ({round(seconds)} s): {' '.join(cmd[3:])}", flush=True)
    start = time.time()
    # its own process group: on timeout the xdist workers go too (not left holding the GPU)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    try:
        result["returncode"] = proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        result["returncode"] = "timed out"
        _kill_group(proc)
    if os.path.exists(summary):
        with open(summary) as f:
            result.update(json.load(f))
        os.remove(summary)
    result["wall_s"] = round(time.time() - start, 1)
    return result


def _kill_group(proc) -> None:
    for sig in (signal.SIGINT, signal.SIGKILL):  # SIGINT first: pytest writes its summary
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=20)
            return
        except (ProcessLookupError, subprocess.TimeoutExpired):
            continue


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "bench/results")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds for all phases")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--phases", default="", help="comma-separated subset of phase names")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    chosen = [p for p in PHASES if not args.phases or p[0] in args.phases.split(",")]
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "device": args.device, "versions": versions(), "phases": {}}
    deadline = time.time() + args.budget
    path = os.path.join(args.out, "test_gpu_summary.json")
    for i, (name, share, paths, extra, env_extra) in enumerate(chosen):
        if env_extra:
            report.setdefault("environment", {})[name] = env_extra
        left = deadline - time.time()  # unused time of earlier phases goes to later ones
        seconds = max(30.0, left * share / sum(p[1] for p in chosen[i:]))
        report["phases"][name] = run_phase(name, paths, extra, env_extra, seconds, args.out,
                                           args.workers, args.device)
        _write(path, report)
    totals = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
    for phase in report["phases"].values():
        for k in totals:
            totals[k] += phase.get("totals", {}).get(k, 0)
    report["totals"] = totals
    report["ok"] = totals["failed"] == 0 and totals["error"] == 0 and all(
        p.get("returncode") in (0, None, 5) for p in report["phases"].values())
    _write(path, report)
    print(f"\nsummary: {json.dumps(totals)} ok={report['ok']} -> {path}", flush=True)
    return 0 if report["ok"] else 1


def _write(path, report):
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())

"""`symc demo`: train the shipped byte-level GPT on variable-length batches of shipped text.

    report = run_demo(DemoOptions(steps=150, backend="inductor"))
    print(report.losses[0], "->", report.losses[-1], report.compiles, report.recompiles)

Each step draws a new sequence length; the model is compiled once with `symc.compile` and should
serve every length (1 compile, 0 recompiles). If a symc stage fails, the demo says which one and
finishes the run in eager. At the end it times eager on the same batches and samples some text.
"""

from __future__ import annotations

import copy
import math
import random
import re
import time
import traceback
from dataclasses import dataclass, field
from importlib import resources

import torch

from symc.demo_model import GPT, GPTConfig

# Which symc stage an exception came from, by the top-level package that raised it.
STAGE_OF_PACKAGE = {
    "capture": "capture (bytecode -> graph)",
    "guards": "guards",
    "symbolic": "symbolic shapes",
    "prims": "prims (decomposition)",
    "autograd_aot": "autograd_aot (backward graph)",
    "inductor": "inductor (code generation)",
    "symc": "symc driver",
}


@dataclass
class DemoOptions:
    steps: int = 300
    device: str = "cpu"
    backend: str = "inductor"
    compare_torch: bool = False
    seqlen_min: int = 16
    seqlen_max: int = 128
    batch: int = 16
    n_layer: int = 3
    n_head: int = 4
    n_embd: int = 64
    lr: float = 6e-3
    seed: int = 0
    sample_bytes: int = 200
    compare_eager: bool = True
    progress: bool = True

    @classmethod
    def for_device(cls, device: str, **overrides) -> DemoOptions:
        """Defaults sized for `device`: the CPU ones finish in a few minutes on 2 cores; on a GPU
        the model, batch, lengths and step count are larger (so the sample reads more like text)."""
        base = {"device": device}
        if device.startswith("cuda"):
            base.update(steps=600, batch=32, seqlen_max=256, n_layer=4, n_embd=128, lr=3e-3)
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)


@dataclass
class ModeTiming:
    """Wall times of one pass over the demo's batches."""

    name: str
    step_seconds: list[float] = field(default_factory=list)
    tokens: int = 0
    error: str | None = None
    compiles: int | None = None
    recompiles: int | None = None

    @property
    def total(self) -> float:
        return sum(self.step_seconds)

    @property
    def steady_tokens_per_s(self) -> float:
        """Tokens per second over all steps but the first (which includes compilation)."""
        rest = self.step_seconds[1:] or self.step_seconds
        return self.tokens * len(rest) / max(len(self.step_seconds), 1) / max(sum(rest), 1e-9)


@dataclass
class DemoReport:
    options: DemoOptions
    seqlens: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    compiled: ModeTiming | None = None
    eager: ModeTiming | None = None
    torch_compile: ModeTiming | None = None
    failure: str | None = None  # "stage: ExceptionType: message" when symc fell back to eager
    failure_step: int | None = None
    compiles: int | None = None
    recompiles: int | None = None
    graph_breaks: int | None = None
    kernels: int | None = None
    guards: list[str] = field(default_factory=list)
    explanation: str | None = None
    sample: str = ""

    @property
    def steps(self) -> int:
        return len(self.losses)


# ---------------------------------------------------------------------------------------------
# Data


def load_text() -> bytes:
    """The public-domain English text shipped in symc/data/, all files joined, as bytes."""
    data = resources.files("symc") / "data"
    names = sorted(p.name for p in data.iterdir() if p.name.endswith(".txt"))
    return b"\n\n".join((data / name).read_bytes() for name in names)


def draw_lengths(steps: int, lo: int, hi: int, seed: int) -> list[int]:
    """The sequence length of each step, uniform in [lo, hi], reproducible from `seed`."""
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(steps)]


def make_batches(text: bytes, lengths: list[int], batch: int, seed: int):
    """(x, y) byte batches, one per length: y is x shifted by one byte."""
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8).long()
    g = torch.Generator().manual_seed(seed)
    out = []
    for t in lengths:
        starts = torch.randint(0, len(data) - t - 1, (batch,), generator=g)
        x = torch.stack([data[s : s + t] for s in starts.tolist()])
        y = torch.stack([data[s + 1 : s + t + 1] for s in starts.tolist()])
        out.append((x, y))
    return out


# ---------------------------------------------------------------------------------------------
# Training


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def describe_failure(exc: BaseException, where: str) -> str:
    """'<stage> failed during <where>: <Type>: <message>' naming the symc package that raised."""
    package = type(exc).__module__.split(".")[0]
    if package not in STAGE_OF_PACKAGE or package == "symc":
        # else: the innermost frame inside a symc package (not this demo) names the stage
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            parts = frame.filename.replace("\\", "/").split("/")
            if parts[-1] in ("demo.py", "demo_model.py"):
                continue
            hits = [p for p in parts[:-1] if p in STAGE_OF_PACKAGE]
            if hits:
                package = hits[-1]
                break
    stage = STAGE_OF_PACKAGE.get(package, "symc (an error outside its stages)")
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{stage} failed during {where}: {type(exc).__name__}: {message}"[:400]


def _train_step(step_fn, opt, x, y):
    opt.zero_grad(set_to_none=True)
    _, loss = step_fn(x, y)
    loss.backward()
    opt.step()
    return float(loss.detach())


def _make_optimizer(model: torch.nn.Module, lr: float):
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, betas=(0.9, 0.95))


def _symc_counts(compiled) -> dict:
    """compiles, recompiles, graph breaks, kernels and guards from symc.explain."""
    import symc

    exp = symc.explain(compiled)
    return {
        "compiles": exp.compiles,
        "recompiles": exp.recompiles,
        "graph_breaks": exp.graph_breaks,
        "kernels": sum(e.kernels for e in exp.entries),
        "guards": list(exp.entries[0].guards) if exp.entries else [],
        "explanation": str(exp),
    }


def _time_pass(name, model, batches, opts, step_fn=None) -> ModeTiming:
    """One timed training pass of `model` (a fresh copy of the initial weights) over `batches`."""
    timing = ModeTiming(name)
    opt = _make_optimizer(model, opts.lr)
    fn = model if step_fn is None else step_fn
    try:
        for x, y in batches:
            x, y = x.to(opts.device), y.to(opts.device)
            _sync(opts.device)
            t0 = time.perf_counter()
            _train_step(fn, opt, x, y)
            _sync(opts.device)
            timing.step_seconds.append(time.perf_counter() - t0)
            timing.tokens += x.numel()
    except Exception as exc:  # noqa: BLE001 - a comparison mode failing is reported, not fatal
        timing.error = f"{type(exc).__name__}: {str(exc)[:300]}"
    return timing


def _progress(opts: DemoOptions, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.3f}"), TextColumn("T={task.fields[seqlen]:>4}"),
        TextColumn("{task.fields[tps]:>8.0f} tok/s"), TextColumn("{task.fields[mode]}"),
        TimeElapsedColumn(), console=console, disable=not opts.progress, transient=False)


def run_demo(opts: DemoOptions, console=None) -> DemoReport:
    """Train with symc (falling back to eager on a failure), then compare speed and sample text."""
    torch.manual_seed(opts.seed)
    report = DemoReport(opts)
    text = load_text()
    config = GPTConfig(n_layer=opts.n_layer, n_head=opts.n_head, n_embd=opts.n_embd,
                       block_size=max(opts.seqlen_max, 16))
    model = GPT(config).to(opts.device)
    initial_state = copy.deepcopy(model.state_dict())
    report.seqlens = draw_lengths(opts.steps, opts.seqlen_min, opts.seqlen_max, opts.seed)
    batches = make_batches(text, report.seqlens, opts.batch, opts.seed)

    step_fn, compiled, mode = model, None, "eager"
    if opts.backend != "none":  # "eager" still goes through symc: capture + its eager backend
        try:
            import symc

            compiled = symc.compile(model, backend=opts.backend)
            step_fn, mode = compiled, f"symc[{opts.backend}]"
        except Exception as exc:  # noqa: BLE001 - the demo reports, then goes on in eager
            report.failure, report.failure_step = describe_failure(exc, "symc.compile()"), 0
            mode = "eager (fallback)"

    opt = _make_optimizer(model, opts.lr)
    timing = ModeTiming(mode)
    with _progress(opts, console) as progress:
        task = progress.add_task("train", total=opts.steps, loss=float("nan"), seqlen=0, tps=0.0,
                                 mode=mode)
        for i, (x, y) in enumerate(batches):
            x, y = x.to(opts.device), y.to(opts.device)
            _sync(opts.device)
            t0 = time.perf_counter()
            try:
                loss = _train_step(step_fn, opt, x, y)
            except Exception as exc:  # noqa: BLE001
                if step_fn is model:
                    raise  # eager itself failed: a real bug, show it
                report.failure = describe_failure(exc, f"training step {i}")
                report.failure_step = i
                step_fn, mode = model, "eager (fallback)"
                loss = _train_step(step_fn, opt, x, y)
            _sync(opts.device)
            dt = time.perf_counter() - t0
            timing.step_seconds.append(dt)
            timing.tokens += x.numel()
            report.losses.append(loss)
            progress.update(task, advance=1, loss=loss, seqlen=x.shape[1], tps=x.numel() / dt,
                            mode=mode)
    timing.name = mode
    report.compiled = timing

    if compiled is not None:
        try:
            for key, value in _symc_counts(compiled).items():
                setattr(report, key, value)
        except Exception as exc:  # noqa: BLE001
            report.explanation = f"symc.explain failed: {type(exc).__name__}: {exc}"
    if opts.compare_eager:
        fresh = GPT(config).to(opts.device)
        fresh.load_state_dict(initial_state)
        report.eager = _time_pass("eager", fresh, batches, opts)
    if opts.compare_torch:
        report.torch_compile = _time_torch_compile(config, initial_state, batches, opts)
    report.sample = model.generate_text(b"Alice ", opts.sample_bytes, seed=opts.seed)
    return report


def _time_torch_compile(config, initial_state, batches, opts) -> ModeTiming:
    """The same pass under torch.compile(dynamic=None), with its frame compile counts."""
    try:
        import torch._dynamo
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        fresh = GPT(config).to(opts.device)
        fresh.load_state_dict(initial_state)
        timing = _time_pass("torch.compile", fresh, batches, opts, torch.compile(fresh))
        frames = counters["frames"]["ok"]
        timing.compiles = frames
        timing.recompiles = max(0, frames - 1) if frames else 0
        return timing
    except Exception as exc:  # noqa: BLE001
        return ModeTiming("torch.compile", error=f"{type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------------------------
# Report


_SYMBOL = re.compile(r"\bs\d+\b")


def split_guards(guards: list[str]) -> tuple[list[str], list[str]]:
    """(guards mentioning a size symbol s0, s1, ..., every other guard)."""
    sized = [g for g in guards if _SYMBOL.search(g)]
    return sized, [g for g in guards if not _SYMBOL.search(g)]


def _mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def format_report(report: DemoReport) -> str:
    """A plain-text summary of a demo run (what `symc demo` prints at the end)."""
    o, lines = report.options, []
    k = max(1, min(10, report.steps // 5))
    first, last = _mean(report.losses[:k]), _mean(report.losses[-k:])
    lines.append(f"steps: {report.steps}  batch {o.batch}  lengths {o.seqlen_min}..{o.seqlen_max}"
                 f"  ({len(set(report.seqlens))} distinct)  device {o.device}  backend {o.backend}")
    lines.append(f"loss: {first:.3f} (first {k} steps) -> {last:.3f} (last {k} steps)"
                 + ("  falling" if last < first else "  NOT falling"))
    if report.failure:
        lines.append(f"symc FAILED at step {report.failure_step}: {report.failure}")
        lines.append("  -> the rest of the run used eager PyTorch")
    if report.compiles is not None:
        lines.append(f"compilations: {report.compiles}  recompiles: {report.recompiles}  "
                     f"graph breaks: {report.graph_breaks}  kernels generated: "
                     f"{'n/a' if report.kernels is None else report.kernels}")
    if report.guards:
        sized, structural = split_guards(report.guards)
        lines.append(f"guards of the compiled entry ({len(report.guards)}): on symbolic sizes:")
        lines += [f"  {g}" for g in sized] or ["  (none: every length is admitted)"]
        lines.append(f"  + {len(structural)} structural guards (module identity and attributes, "
                     f"dtypes, devices, ranks, parameter shapes), e.g.")
        lines += [f"  {g}" for g in structural[:3]]
    lines.append("speed (same batches):")
    rows = [t for t in (report.compiled, report.eager, report.torch_compile) if t is not None]
    for t in rows:
        if t.error:
            lines.append(f"  {t.name:<22} failed: {t.error}")
            continue
        first_step = t.step_seconds[0] if t.step_seconds else float("nan")
        extra = "" if t.compiles is None else f"  compiles {t.compiles} recompiles {t.recompiles}"
        lines.append(f"  {t.name:<22} total {t.total:7.2f}s  first step {first_step:6.2f}s  "
                     f"steady {t.steady_tokens_per_s:9.0f} tok/s{extra}")
    if (report.compiled and report.eager and not report.eager.error and not report.failure
            and report.eager.total > 0):
        ratio = report.compiled.steady_tokens_per_s / max(report.eager.steady_tokens_per_s, 1e-9)
        lines.append(f"  steady-state speed vs eager: {ratio:.2f}x")
    lines.append("sample:")
    lines.append("  " + report.sample.replace("\n", "\n  "))
    return "\n".join(lines)


def loss_is_finite(report: DemoReport) -> bool:
    return bool(report.losses) and all(math.isfinite(v) for v in report.losses)

"""The C++ backend's reduction accumulators: per reduction, the accumulator variables (one per
output of argmax/argmin and Welford's var_mean), their initial values (the reduction's identity),
the update in the loop body, the `omp simd` reduction clause, and the merge of per-thread
partials (inductor/codegen/cpp.py writes the loops around them)."""

from __future__ import annotations

import torch

from inductor.codegen.cpp_ops import COMPUTE_CTYPE, CV, literal
from inductor.ops import reduction_identity, reduction_op
from prims.opcodes import PrimOp as P


def _identity(op: P, dtype: torch.dtype) -> str:
    return literal(reduction_identity(op, dtype), dtype)


EXTREMES = {P.AMAX: "symc_max", P.AMIN: "symc_min"}  # the prelude's NaN-propagating max/min


class Accumulator:
    """One reduction's accumulator variables, update and merge code."""

    def __init__(self, w, rtype: P, dtype: torch.dtype, value: CV):
        self.rtype, self.names = reduction_op(rtype), []
        if rtype == P.VAR_MEAN:
            self.ct = "double" if value.dtype == torch.float64 else "float"
            self.dtype = torch.float64 if value.dtype == torch.float64 else torch.float32
            base = w.fresh("wf")
            self.names = [f"{base}_mean", f"{base}_m2", f"{base}_n"]
            self.init = ["0", "0", "0"]
        elif rtype in (P.ARGMAX, P.ARGMIN):
            self.dtype = value.dtype
            self.ct = COMPUTE_CTYPE[value.dtype]
            base = w.fresh("arg")
            self.names = [f"{base}_v", f"{base}_i"]
            self.init = [_identity(rtype, value.dtype), "-1"]
        else:
            self.dtype = torch.bool if rtype in (P.ANY, P.ALL) else dtype
            if rtype in (P.SUM, P.PROD) and dtype.is_floating_point:
                self.dtype = torch.float64 if dtype == torch.float64 else torch.float32
            self.ct = COMPUTE_CTYPE[self.dtype]
            self.names = [w.fresh("acc")]
            self.init = [_identity(rtype, self.dtype)]

    def types(self):
        if self.rtype in (P.ARGMAX, P.ARGMIN):
            return [self.ct, "int64_t"]
        return [self.ct] * len(self.names)

    def decl(self, suffix="") -> list[str]:
        return [f"{t} {n}{suffix} = {i};" for t, n, i in zip(self.types(), self.names, self.init)]

    def update(self, value: CV, ridx: str, s="") -> list[str]:
        n = [x + s for x in self.names]
        v = f"static_cast<{self.ct}>({value})"
        r = self.rtype
        if r == P.SUM:
            return [f"{n[0]} += {v};"]
        if r == P.PROD:
            return [f"{n[0]} *= {v};"]
        if r in (P.AMAX, P.AMIN):
            return [f"{n[0]} = {EXTREMES[r]}({n[0]}, {v});"]
        if r == P.ANY:
            return [f"{n[0]} = {n[0]} || ({value} != 0);"]
        if r == P.ALL:
            return [f"{n[0]} = {n[0]} && ({value} != 0);"]
        if r in (P.ARGMAX, P.ARGMIN):
            cmp = ">" if r == P.ARGMAX else "<"
            return [f"if ({n[1]} < 0 || symc_better({v}, {n[0]}, {int(cmp == '>')})) "
                    f"{{ {n[0]} = {v}; {n[1]} = {ridx}; }}"]
        return [f"{{ {self.ct} _v = {v}; {n[2]} += 1; {self.ct} _d = _v - {n[0]}; "
                f"{n[0]} += _d / {n[2]}; {n[1]} += _d * (_v - {n[0]}); }}"]

    def simd_clause(self, suffix="") -> str | None:
        """The `omp simd` reduction clause for the accumulator, or None (welford, argmax:
        their loops stay scalar)."""
        r = self.rtype
        op = {P.SUM: "+", P.PROD: "*", P.ANY: "||", P.ALL: "&&"}.get(r)
        if r in (P.AMAX, P.AMIN):
            name = "max" if r == P.AMAX else "min"
            floating = self.dtype.is_floating_point
            op = f"symc_f{name}" if floating else name  # NaN-propagating: declared in the prelude
        return None if op is None else f"reduction({op}:{self.names[0]}{suffix})"

    def merge(self, part: str) -> list[str]:
        n, p = self.names, [f"{x}{part}" for x in self.names]
        r = self.rtype
        if r == P.SUM:
            return [f"{n[0]} += {p[0]};"]
        if r == P.PROD:
            return [f"{n[0]} *= {p[0]};"]
        if r in (P.AMAX, P.AMIN):
            return [f"{n[0]} = {EXTREMES[r]}({n[0]}, {p[0]});"]
        if r == P.ANY:
            return [f"{n[0]} = {n[0]} || {p[0]};"]
        if r == P.ALL:
            return [f"{n[0]} = {n[0]} && {p[0]};"]
        if r in (P.ARGMAX, P.ARGMIN):
            gt = int(r == P.ARGMAX)
            return [f"if ({p[1]} >= 0 && ({n[1]} < 0 || symc_better({p[0]}, {n[0]}, {gt}))) "
                    f"{{ {n[0]} = {p[0]}; {n[1]} = {p[1]}; }}"]
        return [f"symc_welford_merge({n[0]}, {n[1]}, {n[2]}, {p[0]}, {p[1]}, {p[2]});"]

    def result(self):
        if self.rtype == P.VAR_MEAN:
            return tuple(CV(x, self.dtype) for x in self.names)
        if self.rtype in (P.ARGMAX, P.ARGMIN):
            return CV(f"({self.names[1]} < 0 ? 0 : {self.names[1]})", torch.int64)
        return CV(self.names[0], self.dtype)


def in_thread_order(merges: list[str]) -> list[str]:
    """`merges` run by each thread of a parallel region in turn, thread 0 first (an ordered loop
    of one iteration per thread): partials merged in the same order on every call."""
    return ["#pragma omp for ordered schedule(static, 1)",
            "for (int symc_t = 0; symc_t < omp_get_num_threads(); ++symc_t) {",
            "  #pragma omp ordered", "  {", *("    " + t for t in merges), "  }", "}"]

"""One transcendental per element across a kernel's r loops: a value a reduction's r loop
computes (softmax's `exp(x - max)` in the sum pass) and a later pointwise r loop of the same row
computes again is stored, in the first loop, into the element of the output buffer that the later
loop writes, and read back there instead of recomputed:

    for r: { e = symc_exp(x[r] - max); out[r] = e; sum += e; }     // the sum pass
    for r: { e = out[r]; out[r] = e * (1 / sum); }                  // the output pass

Safe when (checked on a survey render of the kernel, before the real one): the later loop
stores that buffer exactly once, unmasked and unguarded, at the same index in every iteration;
the buffer is an output of float32 storage, not an input, never loaded by the kernel and stored
nowhere else; and nothing the value reads (buffers, forwarded row values) is stored between
the two loops. A value is known by its expression text with every temporary expanded (`key`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EXPENSIVE = ("symc_exp(", "symc_log(", "symc_tanh(", "symc_erf(", "symc_sigmoid(")
_TEMP = re.compile(r"\btmp\d+\b")
_BUFFER = re.compile(r"\b([A-Za-z_]\w*)\[")
_FORWARDED = re.compile(r"\bfwd_([A-Za-z_]\w*?)_\d+\b")  # a forwarded row value's variable
_FORWARDED_KEY = re.compile(r"\b(\w+)@fwd")  # ... in a key (the same in every body variant)


@dataclass
class LoopFacts:
    """What one node's loops did in the survey render."""
    reduction: bool
    keys: list = field(default_factory=list)  # expensive values computed in its r loop
    stores: list = field(default_factory=list)  # (buffer, index text, unconditional, in r)


@dataclass(frozen=True)
class Reuse:
    producer: int  # node index of the reduction computing the value first
    consumer: int  # node index of the pointwise r loop reading it back
    buffer: str
    index: str


class ValueReuse:
    """Survey facts per node, then the plan: expression key -> Reuse."""

    def __init__(self, group, enabled: bool):
        self.group = group
        self.enabled = enabled
        self.surveying = False
        self.nodes: dict[int, LoopFacts] = {}
        self.loaded: set[str] = set()  # buffers some load reads from memory
        self.plan: dict[str, Reuse] = {}
        self.canon: dict[str, str] = {}  # temporary -> its expanded expression
        self.node = -1

    # -- the writer's hooks ----------------------------------------------------------------
    def start_body(self) -> None:
        self.canon, self.node = {}, -1

    def start_node(self, index: int, reduction: bool) -> None:
        self.node = index
        if self.surveying:
            self.nodes[index] = LoopFacts(reduction)

    def key(self, text: str) -> str:
        text = _TEMP.sub(lambda m: f"({self.canon.get(m.group(0), m.group(0))})", text)
        return _FORWARDED.sub(lambda m: f"{m.group(1)}@fwd", text)

    def defined(self, name: str, text: str) -> None:
        self.canon[name] = self.key(text)

    def loaded_from_memory(self, buffer: str) -> None:
        if self.surveying:
            self.loaded.add(buffer)

    def stored(self, buffer: str, index: str, unconditional: bool, in_r: bool) -> None:
        if self.surveying and self.node in self.nodes:
            self.nodes[self.node].stores.append((buffer, index, unconditional, in_r))

    def reuse_for(self, text: str, in_r: bool, masked: bool) -> tuple[str, Reuse | None]:
        """(the key of `text`, its planned reuse) for an expensive value emitted in an r loop;
        records the key in the survey."""
        if not (self.enabled and in_r and not masked and text.startswith(EXPENSIVE)):
            return "", None
        key = self.key(text)
        if self.surveying and self.node in self.nodes:
            self.nodes[self.node].keys.append(key)
        reuse = self.plan.get(key)
        return key, reuse if reuse is not None and self.node in (reuse.producer,
                                                                 reuse.consumer) else None

    # -- the plan --------------------------------------------------------------------------
    def decide(self) -> None:
        self.surveying = False
        self.plan = {}
        g = self.group
        all_stores = [s for facts in self.nodes.values() for s in facts.stores]
        for b, facts in self.nodes.items():
            if facts.reduction:
                continue
            for buffer, index, unconditional, in_r in facts.stores:
                if not (in_r and unconditional and buffer in g.outputs
                        and buffer not in g.inputs and buffer not in self.loaded
                        and str(g.buffers[buffer]) == "torch.float32"
                        and sum(s[0] == buffer for s in all_stores) == 1):
                    continue
                reuse = self._producer(b, buffer, index, facts)
                if reuse is not None:
                    self.plan[reuse[0]] = reuse[1]
                    break

    def _producer(self, consumer: int, buffer: str, index: str, facts: LoopFacts):
        """(key, Reuse) of the first value of the consumer's loop that an earlier reduction of
        the same rows computes, with nothing it reads stored in between; or None."""
        for key in facts.keys:
            for a in sorted(n for n in self.nodes if n < consumer):
                if not (self.nodes[a].reduction and key in self.nodes[a].keys):
                    continue
                reads = set(_BUFFER.findall(key)) | set(_FORWARDED_KEY.findall(key))
                written = {s[0] for n in range(a, consumer) if n in self.nodes
                           for s in self.nodes[n].stores}
                if not reads & written:
                    return key, Reuse(a, consumer, buffer, index)
        return None

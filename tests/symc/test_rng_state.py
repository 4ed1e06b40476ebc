"""torch's generator state inside compiled code (capture/rng_state.py, prims/random.py):
get_rng_state / set_rng_state / manual_seed switch the graph's random stream; after the call
the generator visible to Python is what prims.random `rng_final` promises; the random
decompositions (prims/decompositions/random_draws.py) have the right distributions."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import capture
import symc
from capture.errors import Unsupported
from prims import decompose
from prims.generators import RngFinal
from tests.device import DEVICE, ON_GPU

BACKENDS = ("aot_eager", "inductor")


def frozen_dropout(x):
    """torch.testing's wrapper_set_seed, as OpInfo runs its random ops (the import inside the
    compiled function is part of the test: IMPORT_NAME with a fromlist)."""
    from torch.testing._utils import freeze_rng_state

    with freeze_rng_state():
        torch.manual_seed(42)
        return F.dropout(x, 0.5)


def _one_graph(compiled):
    report = symc.explain(compiled)
    assert (report.compiles, report.graph_breaks) == (1, 0), report


@pytest.mark.parametrize("backend", BACKENDS)
def test_freeze_rng_state_restores_the_generator_and_seeds_the_draws(backend):
    compiled = symc.compile(frozen_dropout, backend=backend, fullgraph=True)
    torch.manual_seed(7)
    before = torch.get_rng_state()
    a = compiled(torch.ones(64, device=DEVICE))
    assert torch.equal(torch.get_rng_state(), before)   # exactly the state before the call
    b = compiled(torch.ones(64, device=DEVICE))
    torch.testing.assert_close(a, b)                    # a function of the seed 42 only
    assert set(a.unique().tolist()) <= {0.0, 2.0} and 0 < int(a.count_nonzero()) < 64
    _one_graph(compiled)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cuda_generator_state_is_followed_beside_the_cpu_one(backend):
    """freeze_rng_state's CUDA branch: the CUDA generator's state is read and restored around
    a seeded draw; on a CPU graph the CPU generator ends as before, and so does the CUDA one
    (never seeded again by the runtime: prims.generators leaves it restored)."""
    def fn(x):
        cpu, cuda = torch.get_rng_state(), torch.cuda.get_rng_state()
        torch.manual_seed(42)
        y = F.dropout(x, 0.5)
        torch.cuda.set_rng_state(cuda)
        torch.set_rng_state(cpu)
        return y

    def seeded_cuda_only(x):
        cpu = torch.get_rng_state()
        torch.manual_seed(3)
        y = torch.rand_like(x)
        torch.set_rng_state(cpu)
        return y

    compiled = symc.compile(fn, backend=backend, fullgraph=True)
    before = torch.get_rng_state()
    a = compiled(torch.ones(64))
    assert torch.equal(torch.get_rng_state(), before)
    torch.testing.assert_close(a, compiled(torch.ones(64)))
    _one_graph(compiled)
    cap = capture.translate(fn, (torch.ones(4),), {})
    assert decompose(cap.graph, cap.env).rng_final == RngFinal("restored", (), "cpu")
    cap = capture.translate(seeded_cuda_only, (torch.ones(4),), {})
    assert decompose(cap.graph, cap.env).rng_final == RngFinal("restored", (("cuda", 3),),
                                                               "cpu")


def test_eager_backend_runs_the_state_calls_exactly():
    compiled = symc.compile(frozen_dropout, backend="eager", fullgraph=True)
    x = torch.ones(32, device=DEVICE)
    torch.testing.assert_close(compiled(x), frozen_dropout(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_without_a_seed_differ_from_call_to_call(backend):
    compiled = symc.compile(lambda x: F.dropout(x, 0.5) + torch.rand_like(x), backend=backend)
    x = torch.ones(256, device=DEVICE)
    assert not torch.equal(compiled(x), compiled(x))


# The next tests read and set the CPU generator: their tensors are on the CPU, so the graph
# draws from it (with CUDA tensors eager's CPU state calls would not touch the draws, and
# neither do symc's: prims/generators.py).
@pytest.mark.parametrize("backend", BACKENDS)
def test_restored_state_repeats_the_draws(backend):
    def fn(x):
        state = torch.get_rng_state()
        a = torch.rand_like(x)
        torch.set_rng_state(state)
        b = torch.rand_like(x)
        return a, b, torch.rand_like(x)

    compiled = symc.compile(fn, backend=backend, fullgraph=True)
    a, b, c = compiled(torch.zeros(100, device="cpu"))
    torch.testing.assert_close(a, b)      # as eager: the same state gives the same draws
    assert not torch.equal(b, c)
    before = torch.get_rng_state()
    compiled(torch.zeros(100, device="cpu"))
    assert not torch.equal(torch.get_rng_state(), before)  # it drew: the generator advanced


@pytest.mark.parametrize("backend", BACKENDS)
def test_manual_seed_leaves_a_generator_that_depends_only_on_the_seed(backend):
    def fn(x):
        torch.manual_seed(123)
        return torch.randn_like(x)

    compiled = symc.compile(fn, backend=backend, fullgraph=True)
    states, values = [], []
    for start in (1, 2):
        torch.manual_seed(start)
        values.append(compiled(torch.zeros(10, device="cpu")))
        states.append(torch.get_rng_state())
    torch.testing.assert_close(values[0], values[1])
    assert torch.equal(states[0], states[1])
    torch.manual_seed(123)
    assert not torch.equal(states[0], torch.get_rng_state())  # the draws advanced it


def test_manual_seed_without_draws_is_replayed_exactly():
    def fn(x):
        torch.manual_seed(5)
        return x + 1

    compiled = symc.compile(fn, backend="inductor", fullgraph=True)
    torch.manual_seed(0)
    compiled(torch.zeros(3, device="cpu"))
    after = torch.get_rng_state()
    torch.manual_seed(5)
    assert torch.equal(after, torch.get_rng_state())


def test_a_state_from_outside_or_a_computed_seed_is_a_graph_break():
    state = torch.get_rng_state()

    def restore_outer(x):
        torch.set_rng_state(state)
        return torch.rand_like(x)

    def seed_from_size(x):
        torch.manual_seed(x.shape[0])
        return torch.rand_like(x)

    with pytest.raises(Unsupported, match="set_rng_state of a state"):
        symc.compile(restore_outer, backend="aot_eager", fullgraph=True)(torch.zeros(3))
    with pytest.raises(Unsupported, match="manual_seed"):
        symc.compile(seed_from_size, backend="aot_eager", fullgraph=True)(torch.zeros(3))


T = torch.Tensor
N = 1 << 16
# name -> (function of a float32 [N] tensor, mean, variance)
DISTRIBUTIONS = {
    "rand_like": (lambda x: torch.rand_like(x), 0.5, 1 / 12),
    "randn_like": (lambda x: torch.randn_like(x), 0.0, 1.0),
    "uniform_": (lambda x: x.uniform_(-2, 4), 1.0, 3.0),
    "normal_": (lambda x: x.normal_(1.0, 2.0), 1.0, 4.0),
    "exponential_": (lambda x: x.exponential_(0.5), 2.0, 4.0),
    "geometric_": (lambda x: x.geometric_(0.2), 5.0, 20.0),
    "log_normal_": (lambda x: x.log_normal_(0.0, 0.25), math.exp(0.25 ** 2 / 2),
                    (math.exp(0.25 ** 2) - 1) * math.exp(0.25 ** 2)),
    "bernoulli": (lambda x: torch.bernoulli(x * 0 + 0.3), 0.3, 0.21),
    "bernoulli_": (lambda x: x.bernoulli_(0.7), 0.7, 0.21),
    "normal": (lambda x: torch.normal(x * 0 + 2.0, 3.0), 2.0, 9.0),
    "randint_like": (lambda x: torch.randint_like(x, 3, 10), 6.0, 4.0),
    "rrelu_training": (lambda x: F.rrelu(x - 1, 0.1, 0.3, training=True), -0.2, 0.04 / 12),
    "alpha_dropout": (lambda x: F.alpha_dropout(x.normal_(), 0.3, training=True), 0.0, 1.0),
    "dropout3d": (lambda x: F.dropout3d(x.view(-1, 16, 1, 1, 1) + 1, 0.25, training=True),
                  1.0, 1 / 3),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distribution_moments(name):
    fn, mean, var = DISTRIBUTIONS[name]
    compiled = symc.compile(fn, backend="inductor", fullgraph=True)
    v = compiled(torch.zeros(N, device=DEVICE)).double()
    se_mean = math.sqrt(var / N)
    assert abs(float(v.mean()) - mean) < 5 * se_mean, (float(v.mean()), mean)
    assert abs(float(v.var()) / var - 1) < 0.05, (float(v.var()), var)


def test_cauchy_quartiles():
    compiled = symc.compile(lambda x: x.cauchy_(1.0, 2.0), backend="inductor", fullgraph=True)
    v = compiled(torch.zeros(N, device=DEVICE)).sort().values
    q1, q2, q3 = (float(v[int(q * N)]) for q in (0.25, 0.5, 0.75))
    assert abs(q2 - 1.0) < 0.05 and abs(q1 + 1.0) < 0.1 and abs(q3 - 3.0) < 0.1


@pytest.mark.parametrize("replacement", (True, False))
def test_multinomial_frequencies(replacement):
    p = torch.tensor([1.0, 0.0, 6.0, 3.0], device=DEVICE)
    rows = 4000
    compiled = symc.compile(lambda w: torch.multinomial(w, 1, replacement),
                            backend="inductor", fullgraph=True)
    samples = compiled(p.expand(rows, 4).contiguous())
    assert samples.shape == (rows, 1) and samples.dtype == torch.int64
    freq = torch.bincount(samples.flatten().cpu(), minlength=4).double() / rows
    torch.testing.assert_close(freq, torch.tensor([0.1, 0.0, 0.6, 0.3], dtype=torch.float64),
                               atol=0.03, rtol=0)


def test_multinomial_without_replacement_draws_distinct_indices():
    compiled = symc.compile(lambda w: torch.multinomial(w, 3), backend="inductor",
                            fullgraph=True)
    samples = compiled(torch.rand(50, 6, device=DEVICE) + 0.1)
    assert all(len(set(row)) == 3 for row in samples.tolist())


def test_fork_rng_restores_the_generator():
    def fn(x):
        with torch.random.fork_rng():
            torch.manual_seed(3)
            y = torch.rand_like(x)
        return y + x

    compiled = symc.compile(fn, backend="inductor", fullgraph=True)
    before = torch.get_rng_state()
    a = compiled(torch.zeros(5))
    assert torch.equal(torch.get_rng_state(), before)
    torch.testing.assert_close(a, compiled(torch.zeros(5)))


def test_the_state_as_a_value_is_a_graph_break():
    def returned(x):
        return x + 1, torch.get_rng_state()

    def read(x):
        return x + torch.get_rng_state().float().sum()

    for fn, why in ((returned, "returning a RngStateVariable"), (read, "RngStateVariable")):
        compiled = symc.compile(fn, backend="aot_eager")
        got, want = compiled(torch.ones(3)), fn(torch.ones(3))
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            torch.testing.assert_close(g, w)
        assert why in str(symc.explain(compiled))


@pytest.mark.skipif(not ON_GPU, reason="CUDA draws: SYMC_TEST_DEVICE=cuda")
@pytest.mark.parametrize("backend", BACKENDS)
def test_cuda_state_restore_repeats_cuda_draws_and_cpu_calls_do_not(backend):
    def fn(x):
        cuda, cpu = torch.cuda.get_rng_state(), torch.get_rng_state()
        a = torch.rand_like(x)
        torch.set_rng_state(cpu)        # the CPU generator: CUDA draws go on
        b = torch.rand_like(x)
        torch.cuda.set_rng_state(cuda)  # the CUDA generator: the draws repeat
        return a, b, torch.rand_like(x)

    compiled = symc.compile(fn, backend=backend, fullgraph=True)
    a, b, c = compiled(torch.zeros(100, device="cuda"))
    assert not torch.equal(a, b)
    torch.testing.assert_close(a, c)
    before = torch.cuda.get_rng_state()
    compiled(torch.zeros(100, device="cuda"))
    assert not torch.equal(torch.cuda.get_rng_state(), before)   # it drew: advanced

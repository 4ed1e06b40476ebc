"""The decomposition families added for OpInfo coverage, end to end: compiled with no graph
break, forward and input gradients equal to eager, over sizes 1, 2, primes and a size above the
first call's hint (one compiled function per case, so later sizes go through its guards).

The oracle is eager PyTorch; the OpInfo run (tests/opinfo/) covers every entry's samples, these
cover dynamic sizes and the pieces the OpInfo samples do not reach (the conv extern's VJP over
new sizes, ceil-mode windows, list indices).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc

BACKENDS = ("aot_eager", "inductor")


def _grads(fn, tensors, seed):
    leaves = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in tensors]
    out = fn(*leaves)
    outs = out if isinstance(out, tuple) else (out,)
    gen = torch.Generator().manual_seed(seed)
    loss = sum((o * torch.randn(o.shape, generator=gen)).sum() for o in outs
               if o.is_floating_point())
    wrt = [t for t in leaves if t.requires_grad]
    grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    return [o.detach() for o in outs], [torch.zeros_like(t) if g is None else g
                                         for g, t in zip(grads, wrt, strict=True)]


def check(fn, make, sizes, backend):
    compiled = symc.compile(fn, backend=backend)
    for k, size in enumerate(sizes):
        torch.manual_seed(k)
        tensors = make(size)
        want, want_grads = _grads(fn, tensors, k)
        got, got_grads = _grads(compiled, tensors, k)
        for g, w in zip(got + got_grads, want + want_grads, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype, (size, g.shape, w.shape)
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4, msg=f"size {size}")
    explained = symc.explain(compiled)
    assert explained.graph_breaks == 0, explained.breaks


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv2d_extern_over_sizes(backend):
    w, b = torch.randn(4, 3, 3, 3), torch.randn(4)

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=2, padding=1)

    check(fn, lambda s: (torch.randn(2, 3, s + 2, s + 3), w, b), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_transpose1d_extern_over_sizes(backend):
    def fn(x, w):
        return F.conv_transpose1d(x, w, stride=2, output_padding=1)

    w = torch.randn(3, 2, 4)
    check(fn, lambda s: (torch.randn(1, 3, s), w), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool2d_ceil_mode_with_indices(backend):
    def fn(x):
        values, indices = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                       return_indices=True)
        return values, indices.float()

    check(fn, lambda s: (torch.randn(1, 2, s, s + 1),), (2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_avg_pool1d_excluding_padding(backend):
    def fn(x):
        return F.avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    check(fn, lambda s: (torch.randn(2, 3, s),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adaptive_avg_pool2d_varying_windows(backend):
    def fn(x):
        return F.adaptive_avg_pool2d(x, (3, 2))

    check(fn, lambda s: (torch.randn(1, 2, s + 2, s),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_interpolate_bilinear_and_nearest(backend):
    def fn(x):
        return (F.interpolate(x, scale_factor=2, mode="bilinear"),
                F.interpolate(x, size=(5, 3), mode="nearest"))

    check(fn, lambda s: (torch.randn(1, 2, s, s + 1),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_index(backend):
    """x[[0, 2]] used to break the graph ("found a list")."""
    def fn(x):
        return x[[0, 2]] * 2, x[:, [1, 0, 1]]

    check(fn, lambda s: (torch.randn(s + 3, 2),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_diagonals(backend):
    def fn(x):
        return torch.diagonal(x, 1), torch.diag_embed(x[0], -1), torch.trace(x)

    check(fn, lambda s: (torch.randn(s, s + 2),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_order_statistics_and_scans(backend):
    def fn(x):
        med = torch.median(x, 1)
        return med.values, med.indices.float(), torch.logcumsumexp(x, 1), torch.kthvalue(
            x, 1, 1).values

    check(fn, lambda s: (torch.randn(3, s),), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scatter_family(backend):
    def fn(x, src, index):
        return (torch.index_add(x, 0, index, src, alpha=2.0),
                torch.scatter(x, 0, index[:, None].expand(-1, 4), src))

    def make(s):
        index = torch.randperm(s + 2)[:s]
        return torch.randn(s + 2, 4), torch.randn(s, 4), index

    check(fn, make, (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_losses_and_norms(backend):
    def fn(x, t):
        return (F.smooth_l1_loss(x, t, beta=0.5), F.kl_div(x, t.softmax(-1), reduction="batchmean"),
                F.binary_cross_entropy_with_logits(x, t.sigmoid()),
                torch.linalg.vector_norm(x, 3, dim=1), F.group_norm(x[:, None], 1))

    check(fn, lambda s: (torch.randn(s, 4), torch.randn(s, 4)), (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_reductions(backend):
    def fn(x, mask):
        return (torch.masked.sum(x, 1, mask=mask), torch.masked.amax(x, 1, mask=mask),
                torch.masked.softmax(x, 1, mask=mask))

    def make(s):
        mask = torch.rand(3, s) > 0.3
        mask[:, 0] = True
        return torch.randn(3, s), mask

    check(fn, make, (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_with_class_probabilities(backend):
    w = torch.rand(5) + 0.5

    def fn(x, p, q):
        return (F.cross_entropy(x, p), F.cross_entropy(x, p, weight=w, reduction="none"),
                F.cross_entropy(q, q.softmax(1), label_smoothing=0.2, reduction="sum"),
                F.cross_entropy(q, q.sigmoid(), weight=w, label_smoothing=0.1))

    check(fn, lambda s: (torch.randn(s, 5), torch.rand(s, 5), torch.randn(2, 5, s)),
          (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scatter_reduce_max_min_prod_through_torch(backend):
    def fn(a, index, src):
        return (a.scatter_reduce(1, index, src, "amax"),
                a.scatter_reduce(1, index, src, "amin", include_self=False),
                torch.scatter_reduce(a, 1, index, src, "prod"))

    def make(s):   # few target columns: duplicate indices, and ties of equal values in src
        src = torch.randint(-2, 3, (s, 6)).float()
        return torch.randn(s, 3), torch.randint(0, 3, (s, 6)), src

    check(fn, make, (1, 2, 7, 13), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_singular_value_norms_through_svdvals(backend):
    def fn(x):
        return (torch.norm(x, "nuc", dim=(0, 2)), torch.linalg.matrix_norm(x, 2, keepdim=True),
                torch.linalg.norm(x, -2, dim=(2, 1)), torch.norm(x[0], "nuc"))

    check(fn, lambda s: (torch.randn(3, s + 1, 4),), (1, 2, 7), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstsq_gels_residuals_follow_the_shape(backend):
    def fn(a, b):
        return torch.linalg.lstsq(a, b, driver="gels")[:2]

    # tall systems (residuals per column), then a wide one (none): two entries
    check(fn, lambda s: (torch.randn(2, s + 4, 3), torch.randn(1, s + 4, 2)), (1, 6), backend)
    check(fn, lambda s: (torch.randn(s, 5), torch.randn(s, 2)), (2, 4), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_embedding_bag_per_sample_weights_by_keyword(backend):
    def fn(weight, idx, offsets, psw):
        return (F.embedding_bag(idx, weight, offsets, mode="sum", per_sample_weights=psw),
                F.embedding_bag(idx, weight, offsets, mode="max", include_last_offset=True))

    def make(s):
        idx = torch.randint(0, 10, (s + 3,))
        return torch.randn(10, 4), idx, torch.tensor([0, 1, s + 1]), torch.rand(s + 3)

    check(fn, make, (1, 2, 7), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_stencils_over_sizes(backend):
    def fn(x):
        return (*torch.gradient(x, spacing=[0.5, 3], dim=[1, 0], edge_order=2),
                *torch.gradient(x, dim=-1), *torch.gradient(x, spacing=2.0))

    check(fn, lambda s: (torch.randn(s + 2, s + 3),), (1, 2, 7), backend)


def test_histogramdd_keeps_eager_nesting_over_sizes():
    def fn(x, edges):
        hist, bin_edges = torch.histogramdd(x, [edges, edges * 2], density=True)
        counts, _ = torch.histogramdd(x, 3)
        return hist, *bin_edges, counts

    compiled = symc.compile(fn, backend="inductor")
    for n in (3, 8, 17):
        x, edges = torch.rand(n, 2), torch.linspace(0, 1, n % 5 + 2)
        for got, want in zip(compiled(x, edges), fn(x, edges), strict=True):
            torch.testing.assert_close(got, want)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0 and report.compiles == 1, report.recompile_reasons


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_output_stft_over_lengths(backend):
    def fn(x, w):
        return (torch.stft(x, 8, hop_length=3, window=w, return_complex=False),
                torch.stft(x, 6, center=False, onesided=False, return_complex=False))

    check(fn, lambda s: (torch.randn(2, s + 10), torch.rand(8)), (1, 2, 7, 13), backend)

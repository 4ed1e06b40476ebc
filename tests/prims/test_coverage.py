"""The coverage table is generated from the registries and printed by `symc ops`."""

from __future__ import annotations

from prims import DECOMPOSITIONS, PRIMS
from prims.coverage import coverage_markdown, decomposed_targets, prims_by_kind
from symc.cli import main


def test_coverage_lists_every_prim_once():
    listed = [name for names in prims_by_kind().values() for name in names]
    assert sorted(listed) == sorted(PRIMS)


def test_coverage_lists_decomposed_targets():
    names = {f"{ns}.{n}" for ns, ns_names in decomposed_targets().items() for n in ns_names}
    for expected in ("torch.nn.functional.layer_norm", "torch.Tensor.view", "operator.add",
                     "torch.matmul", "torch.Tensor.__getitem__"):
        assert expected in names
    assert len(names) <= len(DECOMPOSITIONS)


def test_symc_ops_prints_the_table(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert out == coverage_markdown()
    assert "| reduction |" in out and "`var_mean`" in out
    assert "`scaled_dot_product_attention`" in out

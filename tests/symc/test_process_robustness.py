"""The process keeps working around symc: threads compiling at once, an unwritable cache
folder, meta-device inputs."""

from __future__ import annotations

import threading

import pytest
import torch

import symc
from inductor.runtime import cpp_build

BACKENDS = ["eager", "aot_eager", "inductor"]


def make_branchy(offset: int):
    def branchy(x):
        if x.shape[0] > 2 + offset and x.shape[1] % 2 == 0:
            return x.sum(0) * x.shape[0]
        return x * 2
    return branchy


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_threads_making_first_calls_at_once(backend):
    errors: list[str] = []
    start = threading.Barrier(4)

    def work(i: int, together: bool = True) -> None:
        try:
            fn = make_branchy(i)
            compiled = symc.compile(fn, backend=backend)
            if together:
                start.wait()
            for n in (3, 5, 7, 11):
                x = torch.randn(n, n + i)
                torch.testing.assert_close(compiled(x), fn(x))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    work(9, together=False)  # and symc still works afterwards
    assert errors == []


def test_unwritable_cache_dir_warns_and_builds_privately(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SYMC_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(cpp_build, "_LOADED", {})  # build again, not from memory

    def f(x):
        return x * 3 + 0.25

    compiled = symc.compile(f, backend="inductor")
    with pytest.warns(RuntimeWarning, match="not writable"):
        compiled(torch.randn(4))
    for n in (1, 2, 7):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_meta_device_input_runs_on_meta(backend):
    def f(x):
        return (x * 2 + 1).sum(-1)

    compiled = symc.compile(f, backend=backend)
    for shape in [(3, 4), (1, 2), (7, 13)]:
        out = compiled(torch.empty(shape, device="meta"))
        assert out.device.type == "meta"
        assert out.shape == shape[:1]
    x = torch.randn(5, 3)
    torch.testing.assert_close(compiled(x), f(x))

"""A pytest plugin that writes a run's summary as JSON: passed/failed/skipped per test file.

    python -m pytest -p tests.run_summary --summary-json out.json tests/inductor

The file is rewritten after every finished test (so a run killed by its time limit still leaves
what it got through) and once more at the end; failures carry their test id and the last line of
their error. With pytest-xdist the controller receives every worker's reports, so one file covers
the whole run. scripts/gpu_tests.py merges the phases of the GPU run into one summary.
"""

from __future__ import annotations

import json
import os
import time

OUTCOMES = ("passed", "failed", "skipped", "error")


def pytest_addoption(parser):
    parser.addoption("--summary-json", default=None, help="write a per-file summary JSON here")


def pytest_configure(config):
    path = config.getoption("--summary-json")
    if path and not hasattr(config, "workerinput"):  # the controller only, not xdist workers
        config.pluginmanager.register(_Summary(path), "symc_run_summary")


class _Summary:
    def __init__(self, path: str):
        self.path = path
        self.files: dict = {}
        self.failures: list = []
        self.started = time.time()
        self.last_write = 0.0
        self.finished = False

    def _count(self, nodeid: str, outcome: str):
        row = self.files.setdefault(nodeid.split("::")[0], dict.fromkeys(OUTCOMES, 0))
        row[outcome] += 1

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if report.skipped:
                outcome = "skipped"
            elif report.failed:
                outcome = "failed" if report.when == "call" else "error"
            else:
                outcome = "passed"
            self._count(report.nodeid, outcome)
            if report.failed:
                self.failures.append({"test": report.nodeid, "when": report.when,
                                      "error": _last_line(report.longreprtext)})
        elif report.when == "teardown" and report.failed:
            self._count(report.nodeid, "error")
            self.failures.append({"test": report.nodeid, "when": "teardown",
                                  "error": _last_line(report.longreprtext)})
        if time.time() - self.last_write > 5:
            self._write()

    def pytest_collectreport(self, report):
        if report.failed:
            self._count(report.nodeid or "<collection>", "error")
            self.failures.append({"test": report.nodeid, "when": "collect",
                                  "error": _last_line(report.longreprtext)})

    def pytest_sessionfinish(self, session, exitstatus):
        self.finished = True
        self.exitstatus = int(exitstatus)
        self._write()

    def _write(self):
        self.last_write = time.time()
        totals = dict.fromkeys(OUTCOMES, 0)
        for row in self.files.values():
            for k in OUTCOMES:
                totals[k] += row[k]
        data = {"finished": self.finished, "exitstatus": getattr(self, "exitstatus", None),
                "seconds": round(time.time() - self.started, 1), "totals": totals,
                "files": dict(sorted(self.files.items())), "failures": self.failures}
        tmp = f"{self.path}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, self.path)


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""

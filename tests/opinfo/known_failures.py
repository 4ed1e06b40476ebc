"""OpInfo entries that still differ from eager: (entry, backend, phase) -> what differs.

Run as strict xfails by test_opinfo_conformance.py (a fix fails the test until its row goes) and
counted in the README table. Regenerate the rows with `python -m tests.opinfo.report --known`.
"""

KNOWN_FAILURES: dict[tuple[str, str, str], str] = {
}

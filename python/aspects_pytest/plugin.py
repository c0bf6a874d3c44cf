"""The pytest plugin: the `aspects` fixture (an aspects_pytest.Aspects for one test), and
`pytest --aspects-explore`, which explores each collected test under fault injection."""

import json
import os
import shlex
import subprocess
import sys
import tempfile

import pytest

from . import Aspects, _error


@pytest.fixture
def aspects():
    """Runs programs under fault-injection rules (aspects.run), or gives a live table for a
    program the test starts itself (aspects.table); every table is destroyed afterwards."""
    a = Aspects()
    try:
        yield a
    finally:
        a.close()


def pytest_addoption(parser):
    group = parser.getgroup("aspects")
    group.addoption("--aspects-explore", action="store_true",
                    help="explore each collected test as its own fault campaign (aspectctl explore --tests: each test "
                         "run as `python -m pytest -q ID`) and report the bugs found in it as the test's failure")
    group.addoption("--aspects-explore-arg", action="append", default=[], metavar="ARG",
                    help="an option of aspectctl explore for the campaigns, as one word "
                         "(--aspects-explore-arg=--function=malloc); repeatable")


def pytest_collection_modifyitems(session, config, items):
    """With --aspects-explore, each collected test's call is its campaign's verdict instead:
    the suite is explored once, when the first test runs."""
    if not config.getoption("aspects_explore"):
        return
    suite = _ExploredSuite(config, [item.nodeid for item in items])
    for k, item in enumerate(items):
        item.runtest = (lambda k=k: suite.verdict(k))


class _ExploredSuite:
    """The collected tests as one `aspectctl explore --tests` suite, explored on first use."""

    def __init__(self, config, nodeids):
        self.config = config
        self.nodeids = nodeids
        self.report = None

    def _explore(self):
        root = str(self.config.rootpath)
        lines = [shlex.join([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(root, n)])
                 for n in self.nodeids]
        aspectctl = Aspects().aspectctl
        with tempfile.TemporaryDirectory(prefix="aspects-explore-") as scratch:
            listing = os.path.join(scratch, "tests.list")
            with open(listing, "w") as f:
                f.write("\n".join(lines) + "\n")
            out = tempfile.mkdtemp(prefix="aspects-explore-out-")
            report = os.path.join(scratch, "suite.json")
            p = subprocess.run([aspectctl, "explore", "--tests", listing, "--out", out, "--json", report, "--progress", "never",
                                *self.config.getoption("aspects_explore_arg")], capture_output=True, text=True)
            if p.returncode not in (0, 1, 2) or not os.path.exists(report):
                raise _error(p.returncode, p.stderr)
            with open(report) as f:
                return json.load(f)

    def verdict(self, k):
        if self.report is None:
            self.report = self._explore()
        test = self.report["tests"][k]
        if test["status"] == "failing":
            pytest.fail("fails without any fault, so it was not explored: " + test.get("reason", ""), pytrace=False)
        if test["status"] != "explored":
            pytest.skip("not explored: " + test.get("reason", ""))
        bugs = [b for b in self.report["bugs"] if any(t["test"] == k for t in b["tests"])]
        if bugs:
            lines = []
            for b in bugs:
                mine = next(t for t in b["tests"] if t["test"] == k)
                others = [t["name"] for t in b["tests"] if t["test"] != k]
                lines.append(f"{b['outcome'].upper()} {b['signature']} ({len(mine['faultPoints'])} fault point(s)"
                             + (f"; also reached from {', '.join(others)}" if others else "") + ")")
                if mine.get("reproduce"):
                    lines.append("  reproduce: " + mine["reproduce"])
            pytest.fail(f"{len(bugs)} bug(s) under fault injection:\n" + "\n".join(lines), pytrace=False)

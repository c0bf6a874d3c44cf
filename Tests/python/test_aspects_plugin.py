"""The aspects pytest plugin, used as a tester would (run by Tests/AspectsTests/Packaging/PythonPluginTests.swift
with pytest from a venv where `pip install ./python` put the plugin)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from aspects_pytest import NotFired, NotFound, NothingTested, RuleError, UsageError

WRITER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
results = []
for i in range(1, 6):
    try:
        os.write(fd, b"x")
        results.append(f"write {i}: ok")
    except OSError as e:
        results.append(f"write {i}: {e.strerror}")
print("\n".join(results))
"""


def test_the_third_write_of_a_subprocess_fails(aspects, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    # the 3rd write to the image (the program's other writes, its output, go through)
    disk_full = {"id": "disk", "symbol": "write", "position": "instead", "action": {"fail": "ENOSPC"},
                 "when": {"nth": 3, "args": [{"arg": 0, "fdpath": "*.img"}]}}
    r = aspects.run(["/usr/bin/python3", str(script), str(tmp_path / "out.img")], rules=[disk_full])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2] == "write 3: No space left on device", r.stdout
    assert r.fired("disk") == 1
    assert [e["symbol"] for e in r.events if e["kind"] == "fired"] == ["write"]
    assert r.warnings == []
    # where the firing came from: one call site (object+offset), the one firing there
    assert list(r.sites("disk").values()) == [1] and r.unplaced("disk") == 0, r.sites("disk")
    assert re.fullmatch(r"[^/]+\+0x[0-9a-f]+", next(iter(r.sites("disk")))), r.sites("disk")


def test_rules_as_json_and_the_run_report(aspects, tmp_path):
    r = aspects.run(["/bin/cat", "/etc/hostname"],
                    rules=[{"id": "deny", "symbol": "open", "position": "instead", "action": {"fail": "EACCES"},
                            "when": {"args": [{"arg": 0, "glob": "/etc/hostname"}]}}])
    assert r.returncode == 1 and "Permission denied" in r.stderr
    assert r.matched("deny") == 1 and r.fired("deny") == 1
    assert r.report["attached"][0]["program"].endswith("/cat")


def test_nothing_injected_is_said(aspects):
    r = aspects.run(["/bin/true"], inject=["unlink:error=EPERM:id=u"])
    assert r.returncode == 0
    assert r.fired("u") == 0 and any("never matched" in w for w in r.warnings)


def test_a_live_table_around_a_program_the_test_starts(aspects, tmp_path):
    with aspects.table() as t:
        server = subprocess.Popen(["/usr/bin/python3", "-c", "import sys\nfor line in sys.stdin:\n"
                                   "    try:\n        open('/etc/hostname').close(); print('ok', flush=True)\n"
                                   "    except OSError as e:\n        print(e.strerror, flush=True)\n"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=t.env)

        def call():
            server.stdin.write("x\n")
            server.stdin.flush()
            return server.stdout.readline().strip()

        assert call() == "ok"
        tokens = t.add(inject=["open(/etc/hostname):error=EACCES:id=deny"])
        assert tokens[0].startswith("deny@")
        assert call() == "Permission denied"
        assert t.stats()["deny"]["fired"] == 1
        t.remove(tokens[0])
        assert call() == "ok"
        assert [e["rule"] for e in t.events()] == ["deny"]
        server.stdin.close()
        server.wait()


def test_errors_are_typed(aspects):
    with pytest.raises(RuleError) as bad:
        aspects.run(["/bin/true"], inject=["write:erorr=ENOSPC"])
    assert "unknown setting" in bad.value.message
    with pytest.raises(RuleError):
        aspects.check(rules=[{"symbol": "wirte", "position": "instead", "action": {"fail": "EIO"}}])
    with pytest.raises(NotFound):
        aspects.run(["/no/such/program"])
    assert aspects.check(inject=["write:error=ENOSPC:when=3"]) == [
        {"symbol": "write", "position": "instead", "action": {"fail": "ENOSPC"}, "when": {"nth": 3}}]


def test_a_term_fails_a_function_as_it_really_fails(aspects, tmp_path):
    # fsync reports a write-back error after the write-back ran: the term says nothing of a
    # position and gets the catalog's, so nothing warns against it
    assert aspects.check(inject=["fsync:error=EIO"]) == [{"symbol": "fsync", "position": "after", "action": {"fail": "EIO"}}]
    program = f"import os; f = open({str(tmp_path / 'data')!r}, 'w'); f.write('x'); f.flush(); os.fsync(f.fileno())"
    r = aspects.run([sys.executable, "-c", program], inject=["fsync:error=EIO:id=sync"])
    assert r.returncode == 1 and "Input/output error" in r.stderr, r.stderr
    assert r.fired("sync") == 1
    assert "can never happen" not in r.stderr and not r.warnings
    assert (tmp_path / "data").read_text() == "x"  # the write-back ran before the error


def test_a_command_that_exits_64_gives_its_status(aspects):
    # run's usage errors exit 125, so 64 is the command's own (EX_USAGE of a sysexits program)
    r = aspects.run(["/bin/sh", "-c", "exit 64"], inject=["unlink:error=EIO"])
    assert r.returncode == 64


FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "Fixtures"


@pytest.fixture
def ledger(tmp_path):
    """explore_ledger.c, built: it handles every failure of open and crashes when malloc fails."""
    binary = tmp_path / "ledger"
    subprocess.run(["cc", "-g", "-o", str(binary), str(FIXTURES / "Explore" / "explore_ledger.c")], check=True)
    return str(binary)


SETUP = 'echo "total 42" > ledger.db'


def test_explore_finds_the_crash_under_a_malloc_failure(aspects, ledger):
    campaign = aspects.explore([ledger], functions=["malloc"], strategy="sites", setup=SETUP)
    assert campaign.returncode == 1, campaign.stdout
    crashes = campaign.crashes()
    assert len(crashes) == 1, campaign.stdout
    bug = crashes[0]
    assert bug.signature.startswith("SIGSEGV in "), bug.signature
    assert not bug.caught_by_handler
    assert any(f.get("file") == "explore_ledger.c" for f in bug.stack), bug.stack
    assert [p["function"] for p in bug.fault_points] == ["malloc"], bug.fault_points
    assert bug.fault_points[0]["errno"] == "ENOMEM" and bug.fault_points[0]["fault"] == "error"
    assert bug.reproducer and os.path.exists(bug.reproducer) and bug.reproducer.startswith(campaign.out)
    assert bug.reproduce.startswith("cd ") and "aspectctl run --rules " in bug.reproduce
    assert campaign.outcomes.get("crash") == 1 and len(campaign.runs) == sum(campaign.outcomes.values())


def test_explore_of_a_program_that_handles_every_open_failure_has_no_bugs(aspects, ledger):
    campaign = aspects.explore([ledger], functions=["open"], setup=SETUP)
    assert campaign.returncode == 0, campaign.stdout
    assert campaign.bugs == [] and campaign.crashes() == []
    assert campaign.outcomes == {"handled": len(campaign.runs)} and len(campaign.runs) >= 2, campaign.outcomes


def test_explore_that_tests_nothing_raises(aspects):
    with pytest.raises(NothingTested) as nothing:
        aspects.explore(["/bin/true"], functions=["fsync"])
    assert "never called fsync" in nothing.value.message
    with pytest.raises(UsageError):
        aspects.explore(["/bin/true"], functions=["fsync"], strategy="everywhere")


def test_expect_fired_raises_when_nothing_was_injected(aspects):
    with pytest.raises(NotFired) as unmet:
        aspects.run(["/bin/true"], inject=["unlink:error=EPERM:id=u"], expect_fired=True)
    assert 'rule "u" never matched' in unmet.value.message
    with pytest.raises(NotFired):
        aspects.run(["/bin/true"], inject=["unlink:error=EPERM:id=u"], expect_fired="u")
    r = aspects.run(["/bin/rm", "-f", "/nonexistent/x"], inject=["unlinkat:error=EPERM:id=u"], expect_fired=["u"])
    assert r.fired("u") == 1 and r.returncode == 1
    # a command's own 124, every rule fired: its status, not a NotFired
    r = aspects.run(["/bin/sh", "-c", "rm -f /nonexistent/x; exit 124"], inject=["unlinkat:error=EPERM:id=u"], expect_fired=1)
    assert r.returncode == 124 and r.fired("u") == 1

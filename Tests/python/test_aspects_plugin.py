"""The aspects pytest plugin, used as a tester would (run by Tests/AspectsTests/PythonPluginTests.swift
with pytest from a venv where `pip install ./python` put the plugin)."""

import re
import subprocess

import pytest

from aspects_pytest import NotFound, RuleError

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


def test_a_command_that_exits_64_gives_its_status(aspects):
    # run's usage errors exit 125, so 64 is the command's own (EX_USAGE of a sysexits program)
    r = aspects.run(["/bin/sh", "-c", "exit 64"], inject=["unlink:error=EIO"])
    assert r.returncode == 64

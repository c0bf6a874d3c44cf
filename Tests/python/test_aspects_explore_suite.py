"""`pytest --aspects-explore`: each collected test explored as its own fault campaign, each bug
reported as its test's failure (run by PythonPluginTests with the venv's pytest)."""

import os
import pathlib
import subprocess
import sys

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "Fixtures" / "Explore" / "suite_tool.c"

SUITE = """
import subprocess

TOOL = {tool!r}


def test_parse():
    assert subprocess.run([TOOL, "parse"]).returncode == 0


def test_clean():
    assert subprocess.run([TOOL, "clean"]).returncode == 0
"""


def test_each_collected_test_is_explored_and_its_bugs_are_its_failure(tmp_path):
    tool = tmp_path / "suite_tool"
    subprocess.run(["cc", "-g", "-O0", "-o", str(tool), str(FIXTURE)], check=True)
    (tmp_path / "test_tool.py").write_text(SUITE.format(tool=str(tool)))
    # only suite_tool's calls are failed (--process), not the Python interpreter's
    args = ["--function=malloc", "--strategy=sites", "--max-runs=2", "--process=suite_tool"]
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--aspects-explore",
                        *[f"--aspects-explore-arg={a}" for a in args], str(tmp_path / "test_tool.py")],
                       capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "FAILED test_tool.py::test_parse" in out, out
    assert "CRASH SIGSEGV in store_record" in out, out
    assert "reproduce: aspectctl run --rules " in out, out

"""aspects for pytest: run programs under fault-injection rules and inspect what happened.

The ``aspects`` fixture (registered by this package's pytest plugin) is an :class:`Aspects`.
It drives ``aspectctl`` — found at ``$ASPECTCTL`` or on ``PATH`` — and never loads anything
into the test process itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

__all__ = ["Aspects", "Result", "LiveTable", "Campaign", "Bug", "AspectsError", "RuleError", "UsageError", "NotFound",
           "CommandError", "NotFired", "NothingTested"]

Rule = Union[str, Mapping[str, Any]]


class AspectsError(Exception):
    """aspectctl refused or failed; ``status`` is its exit status, ``message`` its words."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class RuleError(AspectsError):
    """A rule is invalid (exit 65): the message names the rule, the field and the fix."""


class UsageError(AspectsError):
    """aspectctl was called wrongly (exit 64; `run` says so with 125, a CommandError)."""


class NotFound(AspectsError):
    """A file, a table or the program could not be found (exit 66, or 127 from run)."""


class CommandError(AspectsError):
    """aspectctl's own failure while running a command (exit 125 or 126)."""


class NotFired(AspectsError):
    """`run(..., expect_fired=...)`: nothing was injected as expected (`--expect-fired`, exit
    124); the message is aspectctl's account of what was not injected."""


class NothingTested(AspectsError):
    """`explore` tested nothing (exit 2): no run was planned (the functions named were never
    called), or with ``strict`` the baseline runs differ. Never a pass."""


# aspectctl's error kinds that are about a rule (aspects_abi.h, enum aspects_error): a
# malformed rule file up to a duplicate id, and the rule-size limits.
_RULE_CODES = set(range(1, 16)) | {25}


def _error(status: int, stderr: str) -> AspectsError:
    message = "\n".join(line for line in stderr.splitlines() if line.startswith("aspectctl: error:")) or stderr.strip()
    code = re.search(r", E(\d+)\]$", message.splitlines()[0] if message else "")
    if status == 65 or (code and int(code.group(1)) in _RULE_CODES):
        return RuleError(status, message)
    if status == 64:
        return UsageError(status, message)
    if status in (66, 127):
        return NotFound(status, message)
    return CommandError(status, message)


@dataclass
class Result:
    """What one `Aspects.run` did."""

    returncode: int
    stdout: str
    stderr: str
    #: every event the run's table kept (config/events.schema.json), oldest first
    events: List[Dict[str, Any]] = field(default_factory=list)
    #: per rule id: {"matched": n, "fired": n, ...} (config/run-report.schema.json)
    stats: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    #: what was not injected (no process attached, a rule never matched)
    warnings: List[str] = field(default_factory=list)
    #: the whole report, as `aspectctl run --report-json` wrote it
    report: Dict[str, Any] = field(default_factory=dict)

    def fired(self, rule: str) -> int:
        """How often a rule fired in this run (0 for an id the run did not have)."""
        return int(self.stats.get(rule, {}).get("fired", 0))

    def matched(self, rule: str) -> int:
        """How many calls matched a rule's conditions in this run, fired or not."""
        return int(self.stats.get(rule, {}).get("matched", 0))

    def sites(self, rule: str) -> Dict[str, int]:
        """Where a rule's firings came from: {"object+0xOFFSET": firings}, most first. These
        are the firings whose events the ring kept (a call that matched without firing has no
        site); ``unplaced(rule)`` counts the others."""
        return {s["site"]: int(s["fired"]) for s in self.stats.get(rule, {}).get("bySite", []) if s["fired"] > 0}

    def unplaced(self, rule: str) -> int:
        """A rule's firings that no event in the ring places (the ring overran, or the caller
        could not be named): ``sum(sites(rule).values()) + unplaced(rule) == fired(rule)``."""
        return int(self.stats.get(rule, {}).get("firedWithoutSite", 0))


@dataclass
class Bug:
    """One bug an `explore` campaign found: findings told apart by their cause
    (config/explore.schema.json, ``bugs``)."""

    #: "crash", "hang", "check-failed" or "silent-difference"
    outcome: str
    #: a crash's signal and where it crashed (``SIGSEGV in fill_record (bugs.c:24)``), else
    #: its symptom (``prog: exit 0; the check failed; stderr: "…"``)
    signature: str
    #: the crashing thread's frames, innermost first: {"object", "offset", "symbol", "file", "line"}
    stack: List[Dict[str, Any]]
    #: the fault points that reach it: {"run", "function", "site", "nth", "errno", "fault"}
    fault_points: List[Dict[str, Any]]
    #: the rules file that reproduces it, and the shell line that does
    reproducer: Optional[str]
    reproduce: Optional[str]
    #: a crash a handler of the program's caught and exited from (m4's "internal error
    #: detected"): a crash all the same, its stack recorded before the handler ran
    caught_by_handler: bool = False


@dataclass
class Campaign:
    """What one `Aspects.explore` campaign found."""

    #: 0 no findings, 1 findings
    returncode: int
    bugs: List[Bug]
    #: runs per outcome: {"crash": 2, "handled": 5, ...}
    outcomes: Dict[str, int]
    #: the directory of reproducers (``--out``)
    out: str
    stdout: str
    stderr: str
    #: the whole campaign, as `aspectctl explore --json` wrote it
    report: Dict[str, Any] = field(default_factory=dict)

    @property
    def runs(self) -> List[Dict[str, Any]]:
        """Every run: its fault point, outcome and record."""
        return self.report.get("runs", [])

    def crashes(self) -> List[Bug]:
        return [b for b in self.bugs if b.outcome == "crash"]


def _rule_args(rules: Optional[Iterable[Rule]], inject: Optional[Iterable[str]]) -> List[str]:
    args: List[str] = []
    for r in rules or []:
        args += ["--rule", r if isinstance(r, str) else json.dumps(r)]
    for term in inject or []:
        args += ["--inject", term]
    return args


def _expects(expect_fired: Union[bool, int, str, Sequence[str], None]) -> bool:
    return expect_fired is not None and expect_fired is not False


def _expect_args(expect_fired: Union[bool, int, str, Sequence[str], None]) -> List[str]:
    """`--expect-fired=...` (always with "=": a bare one would take the command's first word)."""
    if not _expects(expect_fired):
        return []
    if expect_fired is True:
        return ["--expect-fired=all"]
    if isinstance(expect_fired, int):
        return [f"--expect-fired={expect_fired}"]
    ids = [expect_fired] if isinstance(expect_fired, str) else list(expect_fired)
    return ["--expect-fired=" + ",".join(ids)]


class Aspects:
    """Runs `aspectctl` for a test. `aspectctl` is `$ASPECTCTL`, or found on PATH."""

    def __init__(self, aspectctl: Optional[str] = None, workdir: Optional[str] = None):
        path = aspectctl or os.environ.get("ASPECTCTL") or shutil.which("aspectctl")
        if not path or not os.access(path, os.X_OK):
            raise NotFound(66, "aspectctl not found: put it on PATH or set ASPECTCTL")
        self.aspectctl = path
        self._workdir = workdir or tempfile.mkdtemp(prefix="aspects-pytest-")
        self._tables: List["LiveTable"] = []

    def ctl(self, *args: str, input: Optional[str] = None) -> str:
        """Runs aspectctl with arguments; its stdout, or a typed error."""
        p = subprocess.run([self.aspectctl, *args], input=input, capture_output=True, text=True)
        if p.returncode != 0:
            raise _error(p.returncode, p.stderr)
        return p.stdout

    def check(self, rules: Optional[Iterable[Rule]] = None, inject: Optional[Iterable[str]] = None) -> List[Dict[str, Any]]:
        """Validates rules; returns them as JSON rules (an inject term as the rule it means)."""
        return json.loads(self.ctl("check", "--json", *_rule_args(rules, inject)))["json"]

    def run(self, cmd: Sequence[str], rules: Optional[Iterable[Rule]] = None, inject: Optional[Iterable[str]] = None,
            timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None, input: Optional[str] = None,
            cwd: Optional[str] = None, expect_fired: Union[bool, int, str, Sequence[str], None] = None) -> Result:
        """Runs `cmd` under the rules in a private table (`aspectctl run`). The command's own
        status is `returncode` (128+N for signal N); aspectctl's failures raise.

        ``expect_fired`` (`--expect-fired`) raises NotFired when nothing was injected as
        expected: True, unless a process attached and every rule fired; a number, unless the
        rules fired that often in all; rule ids (a string or a list), unless those fired."""
        fd, report_path = tempfile.mkstemp(prefix="run-", suffix=".json", dir=self._workdir)
        os.close(fd)
        args = [self.aspectctl, "run", "--report-json", report_path, *_expect_args(expect_fired), *_rule_args(rules, inject), "--", *cmd]
        environment = dict(os.environ)
        environment.update(env or {})
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=environment, input=input, cwd=cwd)
        # aspectctl's own failures, usage errors too (run keeps them apart from the command's
        # statuses, as env does: 64 is the command's own)
        if p.returncode == 125 or (p.returncode in (126, 127) and "aspectctl: cannot run" in p.stderr):
            raise _error(p.returncode, p.stderr)
        with open(report_path) as f:
            text = f.read()
        report = json.loads(text) if text else {}
        stats = {r["id"]: r for r in report.get("rules", [])}
        if p.returncode == 124 and _expects(expect_fired):
            said = [line for line in p.stderr.splitlines() if line.startswith("aspectctl: ")]
            # A command of its own exiting 124 with every rule fired is not aspectctl's 124.
            if report.get("warnings") or said:
                raise NotFired(124, "\n".join(report.get("warnings", []) + said))
        return Result(p.returncode, p.stdout, p.stderr, report.get("events", []), stats, report.get("warnings", []), report)

    def explore(self, cmd: Sequence[str], functions: Iterable[str] = (), families: Iterable[str] = (),
                faults: Iterable[str] = (), errnos: Iterable[str] = (), processes: Iterable[str] = (),
                strategy: Optional[str] = None,
                setup: Optional[str] = None, check: Optional[str] = None, max_runs: Optional[int] = None,
                jobs: Optional[int] = None, hang_timeout: Optional[float] = None, seed: Optional[int] = None,
                strict: bool = False, out: Optional[str] = None, junit: Optional[str] = None,
                env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                timeout: Optional[float] = None) -> Campaign:
        """A fault campaign on `cmd` (`aspectctl explore`): each call of the functions fails in
        turn, one per run; returns its bugs, so a test can say "no crash under any single
        malloc failure": ``assert aspects.explore(cmd, functions=["malloc"]).crashes() == []``.

        The arguments are explore's options (`aspectctl explore campaign --help`): ``faults`` are
        "error", "short", "persistent"; ``processes`` are ``--process`` globs (only the program
        images whose path one matches are failed); ``strategy`` "sites", "nth" or "both";
        ``hang_timeout`` is explore's ``--timeout`` (seconds before a run is a hang),
        ``timeout`` the whole campaign's. Reproducers go to ``out`` (default: this fixture's
        temporary directory, removed after the test). A campaign that tested nothing raises
        NothingTested; aspectctl's refusals raise as for `run`."""
        out = out or tempfile.mkdtemp(prefix="explore-", dir=self._workdir)
        fd, json_path = tempfile.mkstemp(prefix="explore-", suffix=".json", dir=self._workdir)
        os.close(fd)
        args = [self.aspectctl, "explore", "--out", out, "--json", json_path, "--progress", "never"]
        for flag, values in (("--function", functions), ("--family", families), ("--fault", faults), ("--errno", errnos),
                             ("--process", processes)):
            for v in values:
                args += [flag, v]
        for flag, value in (("--strategy", strategy), ("--setup", setup), ("--check", check), ("--max-runs", max_runs),
                            ("-j", jobs), ("--timeout", hang_timeout), ("--seed", seed), ("--junit", junit)):
            if value is not None:
                args += [flag, str(value)]
        if strict:
            args.append("--strict")
        environment = dict(os.environ)
        environment.update(env or {})
        p = subprocess.run([*args, "--", *cmd], capture_output=True, text=True, timeout=timeout, env=environment, cwd=cwd)
        if p.returncode == 2:
            raise NothingTested(2, "\n".join(l for l in p.stderr.splitlines() if l.startswith("aspectctl:")) or p.stderr.strip())
        if p.returncode not in (0, 1):
            raise _error(p.returncode, p.stderr)
        with open(json_path) as f:
            report = json.load(f)
        bugs = [Bug(b["outcome"], b["signature"], b.get("stack", []), b.get("faultPoints", []), b.get("reproducer"),
                    b.get("reproduce"), b.get("caughtByHandler", False)) for b in report.get("bugs", [])]
        return Campaign(p.returncode, bugs, {k: v for k, v in report.get("outcomes", {}).items() if v}, out,
                        p.stdout, p.stderr, report)

    def table(self, rules: Optional[Iterable[Rule]] = None, inject: Optional[Iterable[str]] = None,
              live_prototypes: bool = False) -> "LiveTable":
        """A table for programs the test starts itself (a server): `with aspects.table(...) as t:`
        then start the program with `env=t.env`, change rules with `t.add`/`t.remove`. With
        `live_prototypes` (`aspectctl create --live-prototypes`), a prototype rule added while
        the program runs applies before its next call of that function (a thread of ours in it)."""
        t = LiveTable(self, os.path.join(tempfile.mkdtemp(prefix="table-", dir=self._workdir), "table"),
                      live_prototypes=live_prototypes)
        if rules or inject:
            t.add(rules=rules, inject=inject)
        self._tables.append(t)
        return t

    def close(self) -> None:
        for t in self._tables:
            t.destroy()
        shutil.rmtree(self._workdir, ignore_errors=True)


class LiveTable:
    """A named table (a file in the test's temporary directory) and the environment that
    makes a program obey it."""

    def __init__(self, aspects: Aspects, path: str, live_prototypes: bool = False):
        self.aspects = aspects
        self.path = path
        self._alive = True
        aspects.ctl("create", "--table", path, *(["--live-prototypes"] if live_prototypes else []))

    @property
    def env(self) -> Dict[str, str]:
        """os.environ plus LD_PRELOAD and ASPECTS_TABLE: pass it to the program you start."""
        e = dict(os.environ)
        library = self._library()
        e["LD_PRELOAD"] = library + (" " + e["LD_PRELOAD"] if e.get("LD_PRELOAD") else "")
        e["ASPECTS_TABLE"] = self.path
        return e

    def _library(self) -> str:
        override = os.environ.get("ASPECTS_PRELOAD")
        if override:
            return override
        here = os.path.dirname(os.path.realpath(self.aspects.aspectctl))
        for candidate in (os.path.join(here, "libaspects.so"), os.path.join(here, "..", "lib", "libaspects.so")):
            if os.path.exists(candidate):
                return os.path.realpath(candidate)
        raise NotFound(66, "libaspects.so not found next to aspectctl: set ASPECTS_PRELOAD")

    def add(self, rules: Optional[Iterable[Rule]] = None, inject: Optional[Iterable[str]] = None) -> List[str]:
        """Adds rules, all or none; returns their tokens (`id@serial`) for `remove`."""
        return self.aspects.ctl("add", "--table", self.path, *_rule_args(rules, inject)).split()

    def remove(self, *tokens: str) -> None:
        self.aspects.ctl("remove", "--table", self.path, *tokens)

    def events(self, clear: bool = False) -> List[Dict[str, Any]]:
        """The events since the last clear (then, with clear=True, marks them read)."""
        lines = self.aspects.ctl("events", "--table", self.path, "--json").splitlines()
        if clear:
            self.aspects.ctl("events", "--table", self.path, "--clear")
        return [json.loads(l) for l in lines if l.strip()]

    def stats(self) -> Dict[str, Dict[str, Any]]:
        doc = json.loads(self.aspects.ctl("stats", "--table", self.path, "--json"))
        return {r["id"]: r for r in doc["rules"]}

    def destroy(self) -> None:
        if self._alive:
            self._alive = False
            try:
                self.aspects.ctl("destroy", "--table", self.path)
            except AspectsError:
                pass

    def __enter__(self) -> "LiveTable":
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

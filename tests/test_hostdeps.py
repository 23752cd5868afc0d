"""The one list of host tools (packaging/host-tools.txt): every command the project runs on
the host is in it, the bootstrap installs exactly its packages, and each package really
provides its command on this machine."""

import ast
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import REPO
from reclaimstudy.util import hostdeps

SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}


NOT_SOURCE = {".git", ".venv", "__pycache__", ".pytest_cache", "results", "build", "fixtures"}


def project_files() -> list[Path]:
    """The work tree's files, without what is built or run there (no git needed)."""
    return [p for p in REPO.rglob("*") if p.is_file()
            and not NOT_SOURCE.intersection(p.relative_to(REPO).parts)
            and p.name != Path(__file__).name]  # this test names unlisted tools on purpose


def python_sources() -> list[Path]:
    """Project Python run on the host: modules, tests, and hooks with a python shebang."""
    found = []
    for path in project_files():
        if path.suffix == ".py" or (path.suffix == "" and path.read_bytes()[:40].startswith(
                b"#!/usr/bin/env python3")):
            found.append(path)
    return found


def shell_sources() -> list[Path]:
    """Shell scripts run on the host (guest-side scripts run in the image's userland)."""
    found = []
    for path in project_files():
        head = path.read_bytes()[:40]
        if head.startswith((b"#!/bin/sh", b"#!/usr/bin/env bash", b"#!/bin/bash")):
            if not path.is_relative_to(REPO / "disk-images") and not path.match("workloads/*/run") \
                    and "guest" not in path.parts:
                found.append(path)
    return found


class ToolCalls(ast.NodeVisitor):
    """Commands named as string constants in subprocess calls, run_logged, require_tool
    and shutil.which: literals, module constants, and loop variables over literal tuples."""

    def __init__(self, tree: ast.Module):
        self.constants: dict[str, list[str]] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                values = self.strings(node.value)
                if values:
                    self.constants[node.targets[0].id] = values
        self.loops: dict[str, list[str]] = {}
        self.tools: set[str] = set()
        self.visit(tree)

    def strings(self, node) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List)):
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                return [e.value for e in node.elts]
        if isinstance(node, ast.Name):
            return self.loops.get(node.id) or self.constants.get(node.id, [])
        return []

    def visit_For(self, node: ast.For):
        if isinstance(node.target, ast.Name):
            self.loops[node.target.id] = self.strings(node.iter)
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            self.loops.pop(node.target.id, None)

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(
            func.value, ast.Name) else ""
        if node.args:
            first = node.args[0]
            if (owner == "subprocess" and name in SUBPROCESS_CALLS) or name == "run_logged":
                if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
                    self.tools.update(self.strings(first.elts[0]))
            elif name == "require_tool" or (owner == "shutil" and name == "which"):
                self.tools.update(self.strings(first))
        self.generic_visit(node)


def python_tools() -> dict[str, set[str]]:
    """tool -> files that run it."""
    found: dict[str, set[str]] = {}
    for path in python_sources():
        for tool in ToolCalls(ast.parse(path.read_text(), str(path))).tools:
            if "/" not in tool:
                found.setdefault(tool, set()).add(str(path.relative_to(REPO)))
    return found


SHELL_WORDS = set("""if then else elif fi for while until do done case esac in function return
exit set shift export local read echo printf cd test [ [[ ]] true false exec eval trap wait
mapfile readonly unset command type source . : break continue shopt""".split())


def shell_tools(path: Path) -> set[str]:
    """First words of the commands of a shell script (a rough parse: enough to notice a new
    tool), without builtins, keywords, its own functions, variables and paths."""
    text = path.read_text()
    functions = set(re.findall(r"^\s*(?:function\s+)?([\w-]+)\s*\(\)", text, re.M))
    found = set()
    for line in text.replace("\\\n", " ").splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        for piece in re.split(r"\|\||&&|[|;]|\$\(|<\(|\bthen\b|\bdo\b|\belse\b", line):
            try:
                words = shlex.split(piece, posix=True)
            except ValueError:
                words = piece.split()
            while words and (re.match(r"^\w+=", words[0]) or words[0] in {"exec", "command",
                                                                          "!", "(", "{"}):
                words = words[1:]
            if not words:
                continue
            word = words[0].rstrip(")")
            if re.match(r"^[\w.+-]+$", word) and word not in SHELL_WORDS | functions \
                    and not word.isdigit():
                found.add(word)
    return found


def test_the_code_scan_finds_the_tools_it_should():
    # The scan itself must work, or the next test passes on nothing.
    found = python_tools()
    for tool in ("mmdebstrap", "mke2fs", "mkswap", "qemu-system-x86_64", "gcc", "make", "tar",
                 "debugfs", "chromium", "xz", "patch", "bc"):
        assert tool in found, f"the scan missed {tool}"
    assert {"apt-get", "dpkg-query", "awk"} <= shell_tools(REPO / "packaging" / "bootstrap.sh")


def test_every_tool_the_code_runs_is_in_the_host_tools_list():
    listed = {need.command for need in hostdeps.host_needs()}
    unlisted = {tool: files for tool, files in python_tools().items() if tool not in listed}
    for script in shell_sources():
        for tool in shell_tools(script) - listed:
            unlisted.setdefault(tool, set()).add(str(script.relative_to(REPO)))
    # The CI script runs outside the project's machine set-up (it builds the fresh root).
    unlisted = {t: f - {".ci/run"} for t, f in unlisted.items() if f - {".ci/run"}}
    assert not unlisted, (f"commands run by the project but missing from {hostdeps.HOST_TOOLS} "
                          f"(add each with its Debian package): {unlisted}")


def test_the_bootstrap_installs_exactly_the_lists_packages():
    printed = subprocess.run([REPO / "packaging" / "bootstrap.sh", "--list-packages"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert printed == hostdeps.debian_packages()
    assert "mmdebstrap" in printed and "qemu-system-x86" in printed


def test_the_bootstrap_installs_the_kernel_source_the_series_was_made_against(tmp_path):
    """A newer Debian revision of the source is another kernel (other run ids): the
    bootstrap asks for the series' version, and is content with nothing else."""
    from reclaimstudy.artefacts.kernel import read_series
    series = read_series()
    # dpkg-query that sees every package installed, the kernel source at VERSION.
    fake = tmp_path / "dpkg-query"
    fake.write_text('#!/bin/sh\ncase "$3" in *Version*) echo "$VERSION";; '
                    '*) echo "install ok installed";; esac\n')
    fake.chmod(0o755)

    def missing(version):
        env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "VERSION": version}
        return subprocess.run([REPO / "packaging" / "bootstrap.sh", "--missing"], env=env,
                              capture_output=True, text=True, check=True).stdout.split()
    assert missing(series.version + "+newer") == [f"{series.package}={series.version}"]
    assert missing(series.version) == []


def owning_packages(path: str) -> set[str]:
    """Debian packages that ship `path` (also under its /usr-merged twin)."""
    candidates = {path, str(Path(path).resolve())}
    for p in list(candidates):
        if p.startswith("/usr/"):
            candidates.add(p[4:])
        else:
            candidates.add("/usr" + p)
    owners = set()
    for candidate in candidates:
        result = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        for line in result.stdout.splitlines():
            packages, _, _ = line.partition(": ")
            owners.update(p.strip().split(":")[0] for p in packages.split(","))
    return owners


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian machine")
def test_each_listed_package_is_installed_and_provides_its_command():
    wrong = []
    for need in hostdeps.host_needs():
        if hostdeps.debian_package_version(need.package) is None:
            wrong.append(f"{need.package} is not installed")
            continue
        if need.command is None:
            continue
        path = shutil.which(need.command)
        if path is None:
            wrong.append(f"{need.command}: not on PATH though {need.package} is installed")
        elif need.package not in (owners := owning_packages(path)):
            wrong.append(f"{need.command} ({path}) comes from {owners or 'no package'}, "
                         f"not {need.package}")
    assert not wrong, "\n".join(wrong)


def test_a_tool_missing_from_the_list_is_a_clear_error():
    with pytest.raises(StudyError, match=r"calls 'rsync' but .*host-tools.txt does not list it"):
        hostdeps.require_tool("rsync")
    assert hostdeps.package_of("mke2fs") == "e2fsprogs"
    assert hostdeps.package_of("qemu-system-x86_64") == "qemu-system-x86"


def test_a_missing_tool_names_its_package(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    with pytest.raises(StudyError, match=r"missing host tool 'mmdebstrap': install it with "
                                         r"`apt-get install mmdebstrap`"):
        hostdeps.require_tool("mmdebstrap")

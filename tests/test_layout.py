"""The code's layout is its architecture: analysis/ only reads runs, and the README's
drawing of which part imports which is the code's own.

Imports are read with `ast` from the source, at module level and inside functions alike
(the tool imports some modules late, on purpose, to start fast)."""

import ast
import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "reclaimstudy"
# Imported by every part; drawn in no arrow.
FOUNDATIONS = {"reclaimstudy.errors", "reclaimstudy.paths", "reclaimstudy.hashing"}
# The tool's face: the command line and `python -m reclaimstudy`.
FACE = {"reclaimstudy.cli", "reclaimstudy.__main__", "reclaimstudy"}
# Kept where workloads' make-data hooks import it from (their bytes are in every image's
# hash); it hands on a name of artefacts/image.py.
HOOK_NAMES = {"reclaimstudy.image": "artefacts"}
# What analysis/ may import of the tool: what a study is made of, and run folders read.
READERS = ("config", "results")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every first-party module `path` imports; `from reclaimstudy
    import x` names the module reclaimstudy.x."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in ("reclaimstudy", "analysis"):
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found
            if name.split(".")[0] in ("reclaimstudy", "analysis")]


def part(module: str) -> str:
    """Which part of the drawing a module belongs to."""
    if module.startswith("analysis"):
        return "analysis"
    if module in FOUNDATIONS:
        return "foundations"
    if module in FACE:
        return "cli"
    if module in HOOK_NAMES:
        return HOOK_NAMES[module]
    parts = module.split(".")
    assert len(parts) > 2 or (PACKAGE / parts[1]).is_dir(), (
        f"{module}: a module at the top of reclaimstudy/; put it in the subpackage it "
        f"belongs to (reclaimstudy/README.md)")
    return parts[1]


def is_reader(module: str) -> bool:
    return module in FOUNDATIONS or part(module) in READERS


def test_analysis_imports_nothing_that_writes_runs():
    """analysis/ reads run folders: of the tool it imports only errors, paths, hashing,
    config/ and results/; publishing, restoring and repeating runs are campaigns/'."""
    wrong = [f"{path.relative_to(REPO)}:{line}: {name}"
             for path in sources(REPO / "analysis") for line, name in imported(path)
             if name.startswith("reclaimstudy") and not is_reader(name)]
    assert not wrong, "analysis/ imports a module that may write results:\n" + "\n".join(wrong)


# Calls that write, move or delete files. str.replace takes two arguments, Path.replace one.
WRITING_METHODS = {"write_text", "write_bytes", "mkdir", "rename", "unlink", "rmdir", "touch",
                   "symlink_to", "hardlink_to", "to_parquet", "to_csv", "savefig"}
WRITING_MODULES = {"shutil", "tempfile"}
WRITING_FUNCTIONS = {("os", name) for name in ("remove", "rename", "replace", "makedirs",
                                               "mkdir", "unlink", "rmdir", "symlink")} | {
    ("json", "dump")}


def writes(path: Path) -> list[str]:
    """Where `path` writes a file, as `line: call`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [f"{node.lineno}: import {n}" for n in names if n in WRITING_MODULES]
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Attribute):
            owner = function.value.id if isinstance(function.value, ast.Name) else None
            if (function.attr in WRITING_METHODS or (owner, function.attr) in WRITING_FUNCTIONS
                    or (function.attr == "replace" and len(node.args) == 1)):
                found.append(f"{node.lineno}: {ast.unparse(function)}()")
        elif isinstance(function, ast.Name) and function.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if not (isinstance(mode, ast.Constant) and set(mode.value) <= set("rbt")) and mode is not None:
                found.append(f"{node.lineno}: open(..., {ast.unparse(mode)})")
    return found


def test_what_analysis_may_import_only_reads():
    """config/ and results/ write no file and import only each other and the foundations,
    so nothing that analysis/ reaches through them writes either."""
    problems = []
    for reader in READERS:
        for path in sources(PACKAGE / reader):
            where = path.relative_to(REPO)
            problems += [f"{where}:{w}" for w in writes(path)]
            problems += [f"{where}:{line}: imports {name}" for line, name in imported(path)
                         if not is_reader(name)]
    assert not problems, "a reader writes, or imports what may:\n" + "\n".join(problems)


def test_the_write_check_sees_writes():
    """The check above is only as good as what it recognises as a write."""
    sample = REPO / "reclaimstudy" / "campaigns" / "rundir.py"
    assert any("write_text" in w for w in writes(sample))
    assert any("rename" in w for w in writes(sample))
    assert not writes(REPO / "reclaimstudy" / "results" / "record.py")


def drawn_arrows() -> set[tuple[str, str]]:
    """The arrows of the README's mermaid drawing of the tree's imports."""
    text = (REPO / "README.md").read_text()
    block = re.search(r"```mermaid\n(.*?)```", text, re.S)
    assert block, "README.md has no mermaid drawing of the tree's imports"
    return set(re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", block[1], re.M))


def code_arrows() -> set[tuple[str, str]]:
    arrows = set()
    for path in sources(PACKAGE) + sources(REPO / "analysis"):
        source = part(module_name(path))
        for _, name in imported(path):
            target = part(name)
            if target not in (source, "foundations"):
                arrows.add((source, target))
    return arrows


def test_the_readme_drawing_of_imports_is_the_codes():
    """Each arrow of the drawing is an import between two parts, and each such import is
    drawn (imports of errors, paths and hashing, which every part makes, are not)."""
    drawn, code = drawn_arrows(), code_arrows()
    assert not code - drawn, f"imports the README's drawing lacks: {sorted(code - drawn)}"
    assert not drawn - code, f"arrows of the README's drawing no import makes: {sorted(drawn - code)}"


def test_the_parts_import_in_one_direction():
    """No two parts import each other, directly or round a loop: each can be read with
    only what is below it in the drawing."""
    arrows = code_arrows()
    below: dict[str, set[str]] = {}
    for source, target in arrows:
        below.setdefault(source, set()).add(target)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for target in below.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen
    loops = sorted(p for p in below if p in reach(p))
    assert not loops, f"parts that import themselves round a loop: {loops}"


def test_what_the_workloads_host_scripts_import_exists():
    """A workload's parse.py and make-data import the tool by name; make-data's bytes are
    in every image's hash, so its imports must keep working where they are."""
    hooks = [p for p in sorted(REPO.glob("workloads/*/make-data"))
             if "python" in p.read_text().partition("\n")[0]]  # some are shell scripts
    checked = 0
    for script in sorted(REPO.glob("workloads/*/parse.py")) + hooks:
        for node in ast.walk(ast.parse(script.read_text(), str(script))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[0] in ("reclaimstudy", "analysis"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{script}: {node.module} has no {alias.name}"
                checked += 1
    assert checked >= 10  # every parse.py, and the make-data hooks that write data files

"""A workload's parameter bounds are kept in one place, its meta.toml: the tool reads them
from there alone (config/workloads.py: Parameter), checks a study's values against them
and hands every parameter to the guest's driver as --name=value. The C program behind
the driver checks its options against its own table (workloads/lib/wl.c: wl_parse).
These tests read both, the C option tables and the meta.toml bounds, and hold them to
each other: every parameter reaches an option of the program (or of its driver script)
of the same kind, every value meta.toml allows is one the program accepts, and the
program accepts exactly those bounds.

The C sources are in every image's hash, and so are meta.toml's parameters
(artefacts/image.py: HOST_ONLY_META leaves out only metrics, regime and pauses): every
run's id depends on them. The generation-1 images' programs had wider tables than
meta.toml (21 bounds); the generation-2 image's agree."""

import ast
import operator
import re
from pathlib import Path

import pytest

from reclaimstudy.config.workloads import load_workloads

OPTION = re.compile(r'\{\s*"([\w-]+)"\s*,\s*WL_(INT|NUM|STR)\s*,\s*((?:\w+\s*)?"[^"]*")\s*,'
                    r'\s*([^,{}]+?)\s*,\s*([^,{}]+?)\s*,\s*"')
DEFINE = re.compile(r"^#define\s+(\w+)\s+(.+?)\s*$", re.M)
OPERATORS = {ast.LShift: operator.lshift, ast.Mult: operator.mul, ast.Add: operator.add,
             ast.Sub: operator.sub}
KINDS = {int: "INT", float: "NUM", str: "STR"}


def _value(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError(f"not a constant expression: {ast.unparse(node)}")


def c_number(text: str, defines: dict[str, str]):
    """A bound of an option table as C computes it (1LL << 40, MAX_APPS, 0.1)."""
    for name, value in defines.items():
        text = re.sub(rf"\b{name}\b", f"({value})", text)
    text = re.sub(r"\b(\d+)(?:ULL|LL|UL|L|U)\b", r"\1", text)
    return _value(ast.parse(text, mode="eval").body)


def c_options(source: Path) -> dict[str, tuple]:
    """--name -> (kind, min, max) of a program's wl_opt table."""
    text = source.read_text()
    defines = dict(DEFINE.findall(text))
    return {name: (kind, c_number(low, defines), c_number(high, defines))
            for name, kind, _, low, high in OPTION.findall(text)}


def driver_options(run: Path) -> set[str]:
    """The --name=* options a driver script takes itself (case patterns)."""
    return set(re.findall(r"--([\w-]+)=\*\)", run.read_text()))


def programs():
    for workload in load_workloads().values():
        options = {}
        for source in workload.sources:
            if source.endswith(".c"):
                options.update(c_options(workload.directory / source))
        yield workload, options, driver_options(workload.directory / "run")


def numeric_parameters():
    for workload, options, _ in programs():
        for name, parameter in workload.parameters.items():
            option = options.get(name.replace("_", "-"))
            if option is not None and option[0] != "STR":
                yield workload.name, name, (parameter.minimum, parameter.maximum), option[1:]


NUMERIC = sorted((w, p, meta, c) for w, p, meta, c in numeric_parameters())


def test_the_option_tables_are_read():
    """The reader finds every program's table (a table it misread would pass below)."""
    tables = {w.name: options for w, options, _ in programs()}
    assert tables["lazyfree"]["records"] == ("INT", 1, 100000)
    assert tables["desktop-launch"]["apps"] == ("INT", 1, 48)
    assert tables["thrash"]["anon-fraction"] == ("NUM", 0.1, 3.0)
    assert tables["hot-stream"]["sparse-multiple"] == ("NUM", 0.0, 100.0)
    assert all(tables[w] for w in tables if w != "smoke")  # smoke is a shell script
    assert len(NUMERIC) >= 23  # every numeric parameter but smoke's (its driver's own)


def test_every_parameter_reaches_an_option_of_its_kind():
    """The guest's driver gets --name=value for every parameter: its program (or the
    driver itself) must take it, as a number where meta.toml's default is one."""
    wrong = []
    for workload, options, driver in programs():
        for name, parameter in workload.parameters.items():
            flag = name.replace("_", "-")
            if flag in driver and flag not in options:
                continue  # the driver script's own (smoke's sizes, mmap-seq's engine)
            if flag not in options:
                wrong.append(f"{workload.name}: --{flag} is no option of "
                             f"{', '.join(workload.sources) or 'its run script'}")
            elif options[flag][0] != KINDS[type(parameter.default)]:
                wrong.append(f"{workload.name}: --{flag} is WL_{options[flag][0]} in C, "
                             f"meta.toml's default {parameter.default!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("workload, parameter, meta, c", NUMERIC,
                         ids=[f"{w}-{p}" for w, p, _, _ in NUMERIC])
def test_the_program_accepts_every_value_meta_toml_allows(workload, parameter, meta, c):
    """What a study file may give (checked when the study is read) never fails in the
    guest, mid-sweep, as a bad option."""
    assert meta[0] is not None and meta[1] is not None, f"{parameter}: give min and max"
    assert c[0] <= meta[0] and meta[1] <= c[1], (
        f"{workload} --{parameter}: meta.toml allows {meta[0]}..{meta[1]}, "
        f"the program only {c[0]}..{c[1]}")


@pytest.mark.parametrize("workload, parameter, meta, c", NUMERIC,
                         ids=[f"{w}-{p}" for w, p, _, _ in NUMERIC])
def test_the_program_accepts_exactly_the_bounds_meta_toml_gives(workload, parameter, meta, c):
    assert tuple(meta) == tuple(c), (
        f"{workload} --{parameter}: meta.toml {meta[0]}..{meta[1]}, C {c[0]}..{c[1]}")

"""Every command shown in README.md and docs/*.md works: the fenced ``bash`` lines are run (cheap ones: ``varcap
sql`` and the DuckDB query against a warehouse of empty tables, ``varcap policies``, ``varcap studies``) or
parsed by the real ``varcap`` parser with their study, policy and capacity names checked (long-running ones);
``make`` targets exist in the Makefile; ``python -m`` modules exist with the subcommands and options shown;
inline `` `varcap …` `` spans name real subcommands and options; relative links resolve."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import shutil
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"```(?:bash|console|sh|shell)\n(.*?)```", re.S)
ENV = re.compile(r"^[A-Z][A-Z0-9_]*=")
#: documented words standing for a value the reader supplies (not checked against a catalogue)
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(\.\w+)?$|^<.*>$|^\.\.\.$|…")


def shell_commands(text: str) -> list[list[str]]:
    """The commands of the fenced shell blocks of a page: continuation lines joined, ``$`` prompts and
    comments dropped, ``cmd1 && cmd2`` split; each as its tokens."""
    out = []
    for block in SHELL_BLOCK.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            tokens = shlex.split(line, comments=True)
            cmd: list[str] = []
            for tok in [*tokens, "&&"]:
                if tok in ("&&", "||", ";"):
                    if cmd:
                        out.append(cmd)
                    cmd = []
                else:
                    cmd.append(tok)
    return out


def all_commands() -> list[tuple[str, list[str]]]:
    return [(p.relative_to(ROOT).as_posix(), c) for p in PAGES for c in shell_commands(p.read_text())]


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.M))


def _env_names_read_by_the_code() -> str:
    return "\n".join(
        p.read_text()
        for pkg in ("pipelines", "assets", "studies", "sim", "analysis")
        for p in (ROOT / pkg).rglob("*.py")
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project home whose warehouse (and its snapshot) holds every table of the data dictionary, empty."""
    from pipelines.cli.docs import table_schemas

    home = tmp_path_factory.mktemp("home")
    (home / "data").mkdir()
    db = home / "data" / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        for schema in table_schemas():
            con.execute(schema.ddl())
    shutil.copyfile(db, home / "data" / "warehouse.snapshot.duckdb")
    return home


def _parse(argv: list[str]) -> argparse.Namespace:
    """The real parser's reading of ``argv``; every option spelled in full (argparse would take a prefix)."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = build_parser().parse_args(argv)
    except SystemExit:
        raise AssertionError(f"varcap {' '.join(argv)}: {err.getvalue().strip()}") from None
    known = {
        s for p in (build_parser(), _subcommands()[args.cmd]) for a in p._actions for s in a.option_strings
    }
    for opt in [a.split("=")[0] for a in argv if a.startswith("--")]:
        assert opt in known, f"varcap {args.cmd}: {opt} is not an option (only a prefix of one?)"
    return args


def check_varcap(argv: list[str], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse with the real parser; run what is cheap, check the names long-running commands would use."""
    if "--help" in argv or "-h" in argv:
        with pytest.raises(SystemExit) as e, contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
        assert e.value.code == 0, argv
        return
    args = _parse(argv)
    monkeypatch.setenv("VARCAP_HOME", str(home))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(home / ".dagster_home"))
    if args.cmd in ("sql", "policies") or (args.cmd == "studies" and not args.study):
        if args.cmd == "sql":
            argv = [*argv, "--csv", str(home / "out.csv")]  # no table printing: only whether it runs
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(argv) == 0, f"varcap {' '.join(argv)} failed"
        return
    if getattr(args, "study", None) and not PLACEHOLDER.search(args.study):
        from studies.catalogue import STUDIES
        from studies.harmony import HARMONY_STUDIES

        assert args.study in STUDIES or args.study in HARMONY_STUDIES, f"unknown study {args.study!r}"
    if args.cmd == "simulate":
        from pipelines.cli.simulate import capacity_file, check_policy_args
        from sim.capacity.trace import CapacitySpec

        check_policy_args(args.policy, args.set)
        if capacity_file(args.capacity) is None:
            CapacitySpec.parse(args.capacity)
        else:  # a trace file, or a misspelled kind
            assert args.capacity.endswith((".csv", ".parquet")), f"--capacity {args.capacity}: no such kind"
        jobs = args.jobs
        assert jobs.startswith("warehouse:") or jobs.endswith((".csv", ".parquet", ".swf", ".swf.gz")), f"--jobs {jobs}"
        if jobs.startswith("data/"):  # an embedded file the command names must exist
            assert (ROOT / jobs).is_file(), f"--jobs {jobs}: no such file"


def check_module(argv: list[str]) -> None:
    """``python -m MODULE [SUBCOMMAND] [--option …]``: the module exists and its source names the subcommand and
    each option as a string (the benchmarks' own parsers would run the benchmark)."""
    assert argv[0] == "-m", argv
    spec = importlib.util.find_spec(argv[1])
    assert spec is not None and spec.origin, f"no module {argv[1]}"
    src = Path(spec.origin).read_text()
    if spec.origin.endswith("__init__.py") and (Path(spec.origin).parent / "__main__.py").exists():
        main = (Path(spec.origin).parent / "__main__.py").read_text()
        src += main
        for mod in re.findall(r"^\s*from ([\w.]+) import", main, re.M):  # the module __main__ runs
            sub = importlib.util.find_spec(mod)
            src += Path(sub.origin).read_text() if sub and sub.origin else ""
    rest = [a for a in argv[2:] if not a.startswith("[") and not PLACEHOLDER.search(a)]
    words = [a.split("=")[0] for a in rest if a.startswith("--")]
    if rest and not rest[0].startswith("-"):
        words.append(rest[0])
    for w in words:
        assert f'"{w}"' in src or f"'{w}'" in src, f"python -m {argv[1]}: {w!r} is not in {spec.origin}"


def check_command(tokens: list[str], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = []
    while tokens and ENV.match(tokens[0]):
        env.append(tokens.pop(0).split("=")[0])
    code = _env_names_read_by_the_code() if env else ""
    for name in env:
        assert f'"{name}"' in code, f"environment variable {name} is read nowhere in the code"
    prog, argv = Path(tokens[0]).name, tokens[1:]
    if prog == "varcap":
        check_varcap(argv, home, monkeypatch)
    elif prog == "make":
        missing = {t for t in argv if not t.startswith("-") and "=" not in t} - make_targets()
        assert not missing, f"no Makefile target {sorted(missing)}"
    elif prog in ("python", "python3"):
        check_module(argv)
    elif prog == "duckdb":
        files = [a for a in argv if a.endswith(".duckdb")]
        sql = [a for a in argv if not a.startswith("-") and not a.endswith(".duckdb")]
        assert len(files) == 1 and len(sql) == 1, tokens
        path = home / files[0]
        assert path.exists(), f"{files[0]}: no such file in a project home"
        with duckdb.connect(str(path), read_only=True) as con:
            con.sql(sql[0]).fetchall()
    elif prog == "pip":
        extras = re.findall(r"\[([\w,-]+)\]", " ".join(argv))
        pyproject = (ROOT / "pyproject.toml").read_text()
        for extra in ",".join(extras).split(","):
            assert not extra or re.search(rf"^{extra}\s*=", pyproject, flags=re.M), f"no extra {extra!r}"
    else:
        raise AssertionError(
            f"unknown command {tokens[0]!r}: teach tests/test_doc_commands.py how to check it"
        )


COMMANDS = all_commands()


def test_pages_show_commands() -> None:
    """The extraction finds the commands (an empty list would make every other test pass vacuously)."""
    progs = {Path(c[0]).name for _, c in COMMANDS}
    assert {"make", "varcap", "duckdb"} <= progs, progs
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("page,tokens", COMMANDS, ids=[f"{p}:{' '.join(c)[:60]}" for p, c in COMMANDS])
def test_documented_command_works(page: str, tokens: list[str], home: Path, monkeypatch) -> None:
    check_command(list(tokens), home, monkeypatch)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


INLINE = re.compile(r"`((?:\.venv/bin/)?varcap(?:\s[^`]*)?|make [a-z][^`]*|python -m [^`]+)`")


def prose(page: Path) -> str:
    """A page without its fenced blocks."""
    return re.sub(r"```.*?```", "", page.read_text(), flags=re.S)


def inline_commands() -> list[tuple[str, str]]:
    return [(p.relative_to(ROOT).as_posix(), m) for p in PAGES for m in INLINE.findall(prose(p))]


def test_inline_commands_name_real_subcommands_and_options() -> None:
    """`` `varcap X --opt …` `` in running text: X is a subcommand and every ``--opt`` one of its options;
    `` `make X` `` a Makefile target; `` `python -m M …` `` an existing module naming the subcommand shown."""
    from studies.catalogue import STUDIES
    from studies.harmony import HARMONY_STUDIES

    subs, targets, bad = _subcommands(), make_targets(), []
    studies = {*STUDIES, *HARMONY_STUDIES}
    found = inline_commands()
    assert len(found) >= 20, found
    for page, span in found:
        words = span.split()
        try:
            if words[0] == "make":
                if words[1] not in targets:
                    bad.append(f"{page}: `{span}`: no Makefile target {words[1]}")
            elif words[0] == "python":
                check_module(words[1:])
        except AssertionError as e:
            bad.append(f"{page}: `{span}`: {e}")
    # `varcap X …` wherever it stands in a code span (also inside quoted messages), up to the next `varcap`
    for page, span in [(p, s) for p in PAGES for s in re.findall(r"`([^`]+)`", prose(p))]:
        for part in re.split(r"(?=\bvarcap)", span)[1:]:
            if part.startswith("varcap:"):  # a message varcap prints ("varcap: error: …"), not a command
                continue
            words = re.sub(r"[()`,;]", " ", part).split()
            if len(words) < 2 or not re.fullmatch(r"[a-z][\w-]*", words[1]):
                continue
            if words[1] not in subs:
                bad.append(f"{page.name}: `{span}`: no subcommand {words[1]}")
                continue
            known = {s for a in subs[words[1]]._actions for s in a.option_strings}
            for opt in re.findall(r"--[\w-]+", " ".join(words[2:])):
                if opt not in known:
                    bad.append(f"{page.name}: `{span}`: varcap {words[1]} has no option {opt}")
            if (
                words[1] in ("sweep", "results", "studies")
                and len(words) > 2
                and re.fullmatch(r"[a-z][\w-]*", words[2])
                and words[2] not in studies
            ):
                bad.append(f"{page.name}: `{span}`: no study {words[2]}")
    assert not bad, "\n".join(bad)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return s.replace(" ", "-")


def test_relative_links_resolve() -> None:
    bad = []
    for page in PAGES:
        text = prose(page)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                bad.append(f"{page.name}: {target}: no such file")
            elif anchor and dest.suffix == ".md":
                heads = re.findall(r"^#+ (.*)$", dest.read_text(), flags=re.M)
                if anchor not in {_slug(h) for h in heads}:
                    bad.append(f"{page.name}: {target}: no such heading")
    assert not bad, "\n".join(bad)

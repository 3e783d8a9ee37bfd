"""The reproduction's numbers in README.md and docs/reproduction.md, generated (``varcap docs``).

``out_reproduction``'s full-profile rows are kept in the repository as :data:`RECORD`
(``docs/results/reproduction-full.csv``: default readings, with the commit and time of the code that
computed them); the README's results table and docs/reproduction.md's result summary are rendered from it
between ``<!-- varcap docs: NAME begin -->`` and ``<!-- varcap docs: NAME end -->`` markers, and
docs/reproduction.md's list of anchors and bands written before the runs or changed after them from the
headlines' definitions. With no record the blocks say how to produce one. ``varcap docs`` refreshes the
record from the warehouse when it holds full-profile rows; ``--check`` fails when the record differs from
the warehouse or a block from what the record gives.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl

from studies.reproduction import COLUMNS

#: ``out_reproduction``'s columns the record leaves in the warehouse: the readings' words (explanations,
#: notes, history, verdict), the paper, the profile (the record is the full profile's)
NOT_RECORDED = frozenset(
    {"reading", "paper", "anchor_text", "explanation", "profile", "reading_history", "verdict", "notes"}
)
#: columns a newer table may add that the record keeps when present (decisive, degenerate and not-run
#: unit counts)
OPTIONAL_COLUMNS = ("n_decisive", "n_degenerate", "n_not_run")
#: the columns of ``out_reproduction`` (:data:`studies.reproduction.COLUMNS`, in its order) the record
#: keeps: all but :data:`NOT_RECORDED` and :data:`OPTIONAL_COLUMNS` (kept too when present, see
#: :func:`record_from_table`)
RECORD_COLUMNS = tuple(c for c in COLUMNS if c not in NOT_RECORDED and c not in OPTIONAL_COLUMNS)


def record_path(repo: Path) -> Path:
    return repo / "docs" / "results" / "reproduction-full.csv"


def marker(name: str, end: bool = False) -> str:
    return f"<!-- varcap docs: {name} {'end' if end else 'begin'} -->"


def replace_block(text: str, name: str, body: str, where: str) -> str:
    """``text`` with what lies between the ``name`` markers replaced by ``body``; ValueError naming
    ``where`` if the markers are missing (a page that lost them cannot be regenerated)."""
    b, e = marker(name), marker(name, end=True)
    m = re.search(re.escape(b) + r"\n.*?" + re.escape(e), text, flags=re.S)
    if m is None:
        raise ValueError(f"{where}: markers {b} … {e} missing")
    return text[: m.start()] + f"{b}\n{body.rstrip()}\n{e}" + text[m.end() :]


# ------------------------------------------------------------------------------------------------ record
def _order() -> dict[str, int]:
    from studies.reproduction import HEADLINES

    return {h.id: i for i, h in enumerate(HEADLINES)}


def record_from_table(df: pl.DataFrame) -> pl.DataFrame:
    """The record of ``out_reproduction`` rows: the full profile's default readings, ids under their
    current names, in table order, :data:`RECORD_COLUMNS` (a column an older table lacks: empty)."""
    from studies.provenance import current_id

    df = df.filter((pl.col("profile") == "full") & ~pl.col("headline_id").str.contains("@"))
    df = df.with_columns(pl.col("headline_id").map_elements(current_id, return_dtype=pl.Utf8))
    cols = [*RECORD_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in df.columns)]
    df = df.with_columns(pl.lit("").alias(c) for c in cols if c not in df.columns)
    order = _order()
    return (
        df.select(cols)
        .with_columns(
            pl.col("headline_id").map_elements(lambda i: order.get(i, len(order)), pl.Int64).alias("_o")
        )
        .sort("_o", "headline_id")
        .drop("_o")
    )


def record_text(df: pl.DataFrame) -> str:
    buf = io.StringIO()
    df.write_csv(buf, float_precision=6)
    return buf.getvalue()


def warehouse_record() -> str | None:
    """The record the warehouse's ``out_reproduction`` gives, or None (no warehouse, no table, or no
    full-profile rows)."""
    df = _full_rows("out_reproduction", "*", "")
    return record_text(record_from_table(df)) if df is not None else None


def _full_rows(table: str, columns: str, order: str) -> pl.DataFrame | None:
    """``table``'s full-profile rows (``columns``, ``order``), or None: no warehouse, no table or no rows."""
    from analysis.warehouse import connect

    try:
        con = connect()
    except FileNotFoundError:
        return None
    with con:
        have = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
        ).fetchall()[0][0]
        if not have:
            return None
        df = con.sql(f"SELECT {columns} FROM {table} WHERE profile = 'full' {order}").pl()
    return df if df.height else None


def read_record(repo: Path) -> pl.DataFrame | None:
    p = record_path(repo)
    if not p.is_file():
        return None
    return pl.read_csv(
        p, infer_schema_length=None, schema_overrides={"flag": pl.Utf8, "code_commit": pl.Utf8}
    )


# ------------------------------------------------------------------------------------------------ blocks
HOW_TO = (
    "No full-profile results are recorded in this checkout (`{record}`). `varcap reproduce` runs the "
    "papers' sizes (5 seeds, about an hour on 2 cores) and writes `out_reproduction`; `varcap docs` then "
    "records its rows in `{record}`, with the commit and date of the code that computed them, and writes "
    "them here. `varcap reproduce --quick` is a smoke test and is not recorded."
)


def _num(v: float | None) -> str:
    return f"{v:.3g}"


def _value(r: dict) -> str:
    from studies.reproduction import value_text

    return value_text(r)


def verdict(r: dict) -> str:
    """The in-band column: yes, or why not (not run, degenerate, not tested, no effect shown, no)."""
    flag = r.get("flag") or ""
    named = {"in band": "yes", "out of band": "**no**", "effect not shown": "**no** (no effect shown)"}
    if r.get("verdict"):  # the row's own verdict (decisive runs only), when the table has it
        return named.get(r["verdict"], str(r["verdict"]))
    if r["within_band"] is True or r["within_band"] == "true":
        return "yes"
    if r["varcap_mean"] is None or r["varcap_mean"] != r["varcap_mean"]:
        return "not run"
    for start, word in (("degenerate", "degenerate"), ("not tested", "not tested")):
        if flag.startswith(start):
            return word
    return "**no** (no effect shown)" if "includes no effect" in flag else "**no**"


def _stamp(df: pl.DataFrame) -> str:
    commits = sorted({c for c in df["code_commit"].fill_null("").to_list() if c})
    dates = sorted({(t or "")[:10] for t in df["computed_at_utc"].fill_null("").to_list() if t})
    c = ", ".join(commits) if commits else "commit not recorded"
    d = " to ".join(dict.fromkeys([dates[0], dates[-1]])) if dates else "date not recorded"
    return f"`varcap reproduce` at {c}, {d}"


def decisive_text(r: dict) -> str:
    """Decisive runs of all the row counted (``12/24``), with those not run over the budget (``, 2 not
    run``); empty when the record has no counts."""
    dec, deg = r.get("n_decisive"), r.get("n_degenerate")
    if dec in (None, "") or deg in (None, ""):
        return ""
    skip = r.get("n_not_run")
    skip = int(skip) if skip not in (None, "") else 0
    return f"{int(dec)}/{int(dec) + int(deg) + skip}" + (f", {skip} not run" if skip else "")


def results_table(df: pl.DataFrame) -> str:
    counts = "n_decisive" in df.columns
    head = "| headline | paper | varcap mean [95 % CI] | band |" + (" decisive |" if counts else "") + " in band |"
    lines = [head, "|---|---|---|---|" + ("---|" if counts else "") + "---|"]
    for r in df.iter_rows(named=True):
        lines.append(
            f"| `{r['headline_id']}` ({r['section']}) | {r['anchor_value']:g} {r['unit']} | {_value(r)} | "
            f"[{_num(r['band_low'])}, {_num(r['band_high'])}] |" + (f" {decisive_text(r)} |" if counts else "")
            + f" {verdict(r)} |"
        )
    return "\n".join(lines)


def _counts(df: pl.DataFrame) -> str:
    n = df.height
    yes = sum(verdict(r) == "yes" for r in df.iter_rows(named=True))
    reps = sorted({int(x) for x in df["replicates"].to_list() if x})
    return f"**{yes} of the {n} headlines are inside their band** ({'/'.join(map(str, reps))} replicates)"


def readme_block(df: pl.DataFrame | None, record: str) -> str:
    if df is None or df.height == 0:
        return "### Results\n\n" + HOW_TO.format(record=record)
    return (
        f"### Results (full profile, {_stamp(df)})\n\n"
        f"{results_table(df)}\n\n"
        f"{_counts(df)}; a row with one run shows `n = 1` and no interval. Every row outside its band "
        "carries its cause and evidence in `out_reproduction.explanation` ([in short, per "
        "row](docs/reproduction.md#results)). Generated by `varcap docs` from "
        f"[`{record}`]({record})."
    )


def results_block(df: pl.DataFrame | None, record: str) -> str:
    """docs/reproduction.md's summary: the count, then every row outside its band with its numbers."""
    rec = record.removeprefix("docs/")  # relative to docs/reproduction.md
    if df is None or df.height == 0:
        return HOW_TO.format(record=record)
    out = [
        f"Full profile, {_stamp(df)} (generated by `varcap docs` from [`{record}`]({rec})): {_counts(df)}. "
        "The table is in the [README](../README.md#reproduction). Rows outside their band (the cause and "
        "evidence of each: `out_reproduction.explanation`):",
        "",
    ]
    for r in df.iter_rows(named=True):
        v = verdict(r)
        if v == "yes":
            continue
        out.append(
            f"* `{r['headline_id']}` ({r['section']}): {_value(r)} {r['unit']} against the paper's "
            f"{r['anchor_value']:g}, band [{_num(r['band_low'])}, {_num(r['band_high'])}] — {v.strip('*')}"
            + (f"; {r['flag']}" if r.get("flag") else "")
            + "."
        )
    return "\n".join(out)


def provenance_block() -> str:
    """Which anchors, bands and default readings are as first written and which changed after results,
    from the headlines' definitions (``reading_history``)."""
    from studies.provenance import changed_after_runs
    from studies.reproduction import HEADLINES

    before, after = changed_after_runs(HEADLINES)
    out = [
        f"**As first written** ({len(before)} headlines; no change to the anchor, band or default reading "
        "since the headline was added, each by the rule of its kind of claim): "
        + ", ".join(f"`{h.id}`" for h in before)
        + ".",
        "",
        f"**Changed after results** ({len(after)} headlines; `out_reproduction.reading_history` carries the "
        "same text):",
        "",
    ]
    groups: dict[str, list] = {}
    for h in after:  # headlines with the same history share one item
        groups.setdefault(h.reading_history, []).append(h)
    for text, hs in groups.items():
        out.append("* " + ", ".join(f"`{h.id}` ({h.section})" for h in hs) + f": {text}")
    return "\n".join(out)


# --------------------------------------------------------------------- ias and ias-general per instance
#: the columns of the per-instance record (``out_thesis_ias_instances``, full profile; wall times left out)
IAS_COLUMNS = (
    "study", "instance", "grid", "workload", "seed", "machines", "jobs", "policy", "ff_terminations",
    "terminations", "termination_cut_pct", "ff_goodput_pct", "goodput_diff_pp", "holds", "decisive",
    "degenerate_reason",
)  # fmt: skip


def ias_record_path(repo: Path) -> Path:
    return repo / "docs" / "results" / "thesis-ias-instances-full.csv"


def warehouse_ias_record() -> str | None:
    """The record of ``out_thesis_ias_instances``' full-profile rows, or None (no warehouse, table or rows)."""
    df = _full_rows("out_thesis_ias_instances", ", ".join(IAS_COLUMNS), "ORDER BY study, instance, policy")
    return record_text(df) if df is not None else None


def ias_block(df: pl.DataFrame | None, record: str) -> str:
    """docs/reproduction.md's section on ``ias`` and ``ias-general`` off the thesis' set-ups: per study and
    policy the decisive instances where the claim holds (Wilson 95 % interval), then every decisive
    instance with both policies' cut and goodput difference."""
    from statsmodels.stats.proportion import proportion_confint

    rec = record.removeprefix("docs/")
    if df is None or df.height == 0:
        return (
            f"No full-profile rows are recorded (`{record}`): `varcap sweep thesis-ias-observed`, `varcap sweep "
            "thesis-ias-generalization`, then materialize `out_thesis_ias_instances` at partition `full` and "
            "run `varcap docs`."
        )
    out = [
        f"Full profile (generated by `varcap docs` from [`{record}`]({rec}), the rows of "
        "`out_thesis_ias_instances`). The claim holds on an instance when the termination cut against "
        "First-Fit is > 0 and goodput ≥ First-Fit's − 2 pt; only decisive instances count.",
        "",
        "| study | policy | decisive | holds | share [95 % CI] | degenerate |",
        "|---|---|---|---|---|---|",
    ]
    for (study, policy), g in df.group_by("study", "policy", maintain_order=True):
        dec = g.filter(pl.col("decisive"))
        n, k = dec.height, int(dec["holds"].sum()) if dec.height else 0
        share = "n/a"
        if n:
            lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
            share = f"{100 * k / n:.0f} % [{100 * lo:.0f}, {100 * hi:.0f}]"
        out.append(f"| {study} | `{policy}` | {n} | {k} | {share} | {g.height - n} |")
    out += [
        "",
        "Decisive instances (cut %, goodput difference pt; First-Fit's terminations):",
        "",
        "| study | instance | machines | jobs | FF kills | `ias` cut | `ias` goodput | `ias-general` cut | "
        "`ias-general` goodput |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    dec = df.filter(pl.col("decisive"))
    for (study, inst), g in dec.group_by("study", "instance", maintain_order=True):
        by = {r["policy"]: r for r in g.iter_rows(named=True)}
        first = next(iter(by.values()))
        cells = []
        for p in ("ias", "ias-general"):
            r = by.get(p)
            cells += (
                [f"{r['termination_cut_pct']:+.1f}", f"{r['goodput_diff_pp']:+.2f}"] if r else ["", ""]
            )
        out.append(
            f"| {study} | {inst} | {first['machines']} | {first['jobs']:,} | {first['ff_terminations']:,} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(out)


def pages(repo: Path, with_warehouse: bool = True) -> dict[Path, str]:
    """README.md and docs/reproduction.md with their generated blocks, and (``with_warehouse``, when the
    warehouse holds full-profile rows) the record those blocks are rendered from."""
    rec_path = record_path(repo)
    rel = str(rec_path.relative_to(repo))
    out: dict[Path, str] = {}
    rec = warehouse_record() if with_warehouse else None
    if rec is not None:
        out[rec_path] = rec
        df = pl.read_csv(
            io.StringIO(rec),
            infer_schema_length=None,
            schema_overrides={"flag": pl.Utf8, "code_commit": pl.Utf8},
        )
    else:
        df = read_record(repo)
    readme, repro = repo / "README.md", repo / "docs" / "reproduction.md"
    if readme.is_file():
        out[readme] = replace_block(
            readme.read_text(), "reproduction results", readme_block(df, rel), "README.md"
        )
    ias_path = ias_record_path(repo)
    ias_rec = warehouse_ias_record() if with_warehouse else None
    if ias_rec is not None:
        out[ias_path] = ias_rec
    ias_text = ias_rec if ias_rec is not None else (ias_path.read_text() if ias_path.is_file() else None)
    ias_df = pl.read_csv(io.StringIO(ias_text), infer_schema_length=None) if ias_text else None
    if repro.is_file():
        t = replace_block(repro.read_text(), "results", results_block(df, rel), "docs/reproduction.md")
        t = replace_block(t, "bands and anchors", provenance_block(), "docs/reproduction.md")
        out[repro] = replace_block(
            t, "ias beyond the thesis", ias_block(ias_df, str(ias_path.relative_to(repo))), "docs/reproduction.md"
        )
    return out

"""Study chapters as executed notebooks (group ``reports``).

* ``out_study_scenarios`` — which scenario ids make up each reproduction study and profile, with the
  key the study builder gives them (``["azure", 1.0, 0.15, 0]``…): how notebooks find a study's rows in
  ``out_sim_results`` without re-deriving the catalogue.
* ``out_workload_stats`` — job-duration, cores and memory statistics of the ingested workloads (thesis
  Table 2.2) and of the synthetic Zipf workloads as the simulator generates them (Table 4.1), each next to
  the paper's printed values.
* ``report_<chapter>`` — one per notebook in ``notebooks/``: the notebook is executed headless (nbclient,
  warehouse opened read-only, charts rendered to PNG by vl-convert, so the HTML needs no network) and
  exported to ``data/reports/<chapter>.html``; its figures also go to ``data/reports/figures/<chapter>/``.
  Each depends on exactly the tables and studies its notebook reads, so the UI marks it stale when they
  change. Metadata: path, figure count, the profile shown.
* ``report_index`` — ``data/reports/index.html``: every chapter with thumbnails and the reproduction table.
"""

import base64
import html
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets import snapshot
from assets.chapter_kernel import RESET_TAG, ChapterKernel, reset_source
from assets.raw import POOL
from assets.reproduction import PROFILE_PARTITIONS, profile_study_deps, results_of
from assets.resources import ChapterKernelResource
from assets.schema import Col, TableSchema
from assets.warehouse import replace_table
from sim import paths
from studies import papers
from studies import reproduction as repro
from studies.papers import Chapter
from studies.thesis import ZIPFS

OUT_STUDY_SCENARIOS = TableSchema(
    "out_study_scenarios",
    "Membership of the reproduction studies: one row per (study, scenario); join `out_sim_results` on "
    "`scenario_id`.",
    (
        Col("study", "VARCHAR", "-", "catalogue study, e.g. repro-thesis-ch4-quick", False),
        Col("base_study", "VARCHAR", "-", "study without the profile suffix, e.g. repro-thesis-ch4", False),
        Col("profile", "VARCHAR", "-", "full or quick", False),
        Col("scenario_id", "VARCHAR", "-", "scenario hash (`out_sim_results.scenario_id`)", False),
        Col("key_json", "VARCHAR", "-", 'the builder\'s key, e.g. ["azure", 1.0, 0.15, 0]', False),
        Col("replicate", "BIGINT", "-", "replicate (the key's last element)", False),
    ),
    ("study", "scenario_id"),
)

OUT_WORKLOAD_STATS = TableSchema(
    "out_workload_stats",
    "Job duration, cores and memory statistics per workload (thesis Tables 2.2 and 4.1), with the "
    "paper's printed values where it prints them.",
    (
        Col("workload", "VARCHAR", "-", "azure, borg2011, pai, mustang, zipf-1.1 … zipf-1.8", False),
        Col("source", "VARCHAR", "-", "core_jobs or sim.workloads.generators.zipf_workload", False),
        Col("jobs", "BIGINT", "jobs", "number of jobs", False),
        Col("duration_mean_h", "DOUBLE", "h", "mean job duration"),
        Col("duration_p50_h", "DOUBLE", "h", "median job duration"),
        Col("duration_p90_h", "DOUBLE", "h", "P90 job duration"),
        Col("duration_p95_h", "DOUBLE", "h", "P95 job duration"),
        Col("cores_mean", "DOUBLE", "cores", "mean cores requested (borg2011: fraction of a machine)"),
        Col("cores_p50", "DOUBLE", "cores", "median cores"),
        Col("cores_p95", "DOUBLE", "cores", "P95 cores"),
        Col("memory_mean_gb", "DOUBLE", "GB", "mean memory (null if unknown)"),
        Col("paper_duration_mean_h", "DOUBLE", "h", "the paper's mean (Table 2.2 / 4.1), if printed"),
        Col("paper_duration_p50_h", "DOUBLE", "h", "the paper's median, if printed"),
        Col("paper_duration_p90_h", "DOUBLE", "h", "the paper's P90, if printed"),
        Col("paper_duration_p95_h", "DOUBLE", "h", "the paper's P95, if printed"),
    ),
    ("workload",),
)

#: Thesis Table 2.2 (runtime of the Azure and Borg samples, hours): mean, P50, P90 (not printed), P95.
THESIS_TABLE_2_2 = {"azure": (60.0, 0.5, None, 720.0), "borg2011": (1.66, 0.1, None, 4.0)}


def study_membership(profiles: list[repro.Profile]) -> pl.DataFrame:
    """``out_study_scenarios`` rows of every reproduction study of ``profiles``."""
    rows = []
    for pr in profiles:
        for base, build in repro.study_builders().items():  # the chapters' studies too (spot-real)
            for key, sc in build(pr).items():
                rows.append(
                    {
                        "study": repro.study_name(base, pr),
                        "base_study": base,
                        "profile": pr.name,
                        "scenario_id": sc.id,
                        "key_json": json.dumps(list(key)),
                        "replicate": int(key[-1]),
                    }
                )
    return pl.DataFrame(rows).unique(["study", "scenario_id"], keep="first", maintain_order=True)


def workload_stats(jobs: pl.DataFrame) -> dict[str, float | int | None]:
    """Duration (hours), cores and memory statistics of one workload (``duration_s, cores[, memory_gb]``)."""
    h = jobs["duration_s"] / 3600.0
    mem = jobs["memory_gb"].drop_nulls() if "memory_gb" in jobs.columns else pl.Series([], dtype=pl.Float64)
    return {
        "jobs": jobs.height,
        "duration_mean_h": h.mean(),
        "duration_p50_h": h.quantile(0.5, "nearest"),
        "duration_p90_h": h.quantile(0.9, "nearest"),
        "duration_p95_h": h.quantile(0.95, "nearest"),
        "cores_mean": jobs["cores"].mean(),
        "cores_p50": jobs["cores"].quantile(0.5, "nearest"),
        "cores_p95": jobs["cores"].quantile(0.95, "nearest"),
        "memory_mean_gb": mem.mean() if mem.len() else None,
    }


def workload_stats_frame(core_jobs: pl.DataFrame, zipf_jobs: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """``out_workload_stats`` rows: one per ``core_jobs`` workload and per synthetic Zipf workload."""
    from sim.workloads.generators import THESIS_TABLE_4_1

    rows = []
    for (wl,), g in sorted(core_jobs.group_by("workload"), key=lambda t: t[0]):
        paper = THESIS_TABLE_2_2.get(str(wl), (None,) * 4)
        rows.append({"workload": wl, "source": "core_jobs", **workload_stats(g), **_paper(paper)})
    for wl, g in zipf_jobs.items():
        paper = THESIS_TABLE_4_1.get(float(wl.split("-")[1]), (None,) * 4)
        rows.append(
            {
                "workload": wl,
                "source": "sim.workloads.generators.zipf_workload",
                **workload_stats(g),
                **_paper(paper),
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)


def _paper(v: tuple) -> dict[str, float | None]:
    names = ("paper_duration_mean_h", "paper_duration_p50_h", "paper_duration_p90_h", "paper_duration_p95_h")
    return {n: (float(x) if x is not None else None) for n, x in zip(names, v, strict=True)}


@dg.asset(
    group_name="reports",
    pool=POOL,
    kinds={"duckdb"},
    code_version="1",
    description="Which scenario ids make up each reproduction study (full and quick), with the builder's "
    "key; notebooks join it with out_sim_results.",
)
def out_study_scenarios(duckdb: DuckDBResource) -> dg.MaterializeResult:
    df = study_membership(list(repro.PROFILES.values()))
    with duckdb.get_connection() as conn:
        replace_table(conn, OUT_STUDY_SCENARIOS, df)
    by = df.group_by("study").len().sort("study")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "studies": dg.MetadataValue.md(
                "| study | scenarios |\n|---|---|\n" + "\n".join(f"| {s} | {n} |" for s, n in by.rows())
            ),
        }
    )


@dg.asset(
    group_name="reports",
    pool=POOL,
    kinds={"duckdb"},
    deps=["core_jobs"],
    code_version="1",
    description="Workload statistics: core_jobs workloads (thesis Table 2.2) and the synthetic Zipf "
    "workloads as generated for the thesis platform (Table 4.1), next to the printed values.",
)
def out_workload_stats(duckdb: DuckDBResource) -> dg.MaterializeResult:
    from sim.capacity.trace import DAY
    from sim.workloads.generators import zipf_workload

    with duckdb.get_connection() as conn:
        # cores_mean of borg2011 stays the normalized request (as documented in OUT_WORKLOAD_STATS)
        jobs = conn.sql(
            "SELECT workload, duration_s, coalesce(cores, cpu_request_norm) AS cores, memory_gb FROM core_jobs"
        ).pl()
    # the thesis platform (1000 × 24 cores, 30 days) at its 80 % load; seed 0 as in the studies
    zipf = {wl: zipf_workload(float(wl.split("-")[1]), 1000, 24, 30 * DAY, seed=0) for wl in ZIPFS}
    df = workload_stats_frame(jobs, zipf)
    with duckdb.get_connection() as conn:
        replace_table(conn, OUT_WORKLOAD_STATS, df)
    return dg.MaterializeResult(metadata={"dagster/row_count": df.height})


# ------------------------------------------------------------------------------------------------ reports
#: every chapter, from the registry of papers (``studies/papers.py``): its notebook, tables and studies
CHAPTERS: tuple[Chapter, ...] = papers.CHAPTERS


def reports_dir() -> Path:
    return paths.data_dir() / "reports"


def notebooks_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "notebooks"


class ReportConfig(dg.Config):
    timeout_s: int = 600
    #: execute the notebook even when its inputs are those of the page on disk (:func:`reusable_render`)
    rerender: bool = False


@dataclass
class Executed:
    html_path: Path
    figures: list[Path]
    errors: list[str]
    seconds: float


class CellFailed(RuntimeError):
    """A notebook cell raised: ``str()`` is one line (:func:`cell_failure_line`), ``detail`` the cell's
    traceback as the notebook printed it (its last 2,500 characters)."""

    def __init__(self, line: str, detail: str) -> None:
        super().__init__(line)
        self.detail = detail


_MISSING_TABLE = re.compile(r"Table with name (\w+) does not exist")


def cell_failure_line(nb_path: Path, ename: str, evalue: str) -> str:
    """One line for a failed cell of ``nb_path``: the exception's name and first line; a table missing
    from the warehouse is named with what makes it (``varcap run``)."""
    first = (evalue or "").strip().splitlines()[0] if (evalue or "").strip() else ""
    missing = _MISSING_TABLE.search(evalue or "")
    if missing:
        return (
            f"{nb_path.name}: the warehouse has no table {missing.group(1)}: run `varcap run` first "
            "(it materializes every table the chapters read)"
        )
    return f"{nb_path.name}: a cell failed: {ename}: {first}"


def execute_notebook(
    nb_path: Path,
    out_dir: Path,
    warehouse: Path,
    params: dict[str, object],
    timeout_s: int = 600,
    study_results: Path | None = None,
    provenance: dict[str, object] | None = None,
    kernel: ChapterKernel | None = None,
) -> Executed:
    """Execute ``nb_path`` headless with ``params`` injected after its ``parameters`` cell, against
    ``warehouse`` (read-only), write ``<out_dir>/<name>.html`` and each figure output as
    ``<out_dir>/figures/<name>/<figure>.png``; ``study_results`` (a parquet file of ``out_study_results``
    rows) stands in for that table in the notebook's connections (``$VARCAP_STUDY_RESULTS``,
    :func:`analysis.warehouse.connect`); ``provenance`` (:mod:`assets.provenance`) is shown at the top of
    the page and written beside the figures; ``kernel``: executed in that shared kernel (a clean
    namespace first, :mod:`assets.chapter_kernel`), else in a kernel of its own. Raises
    :class:`CellFailed` (a ``RuntimeError``: one line, the cell's traceback in ``detail``) if a cell
    fails."""
    import nbformat
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    name = nb_path.stem
    nb = nbformat.read(nb_path, as_version=4)
    inject = nbformat.v4.new_code_cell(
        "# injected by the report asset\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items()),
        metadata={"tags": ["injected-parameters"]},
    )
    at = next((i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), -1)
    nb.cells.insert(at + 1, inject)
    env = {
        **os.environ,
        "VARCAP_WAREHOUSE": str(warehouse),
        "VARCAP_STATIC_CHARTS": "1",
        **({"VARCAP_STUDY_RESULTS": str(study_results)} if study_results else {}),
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
    }
    t0 = time.perf_counter()
    own = kernel is None
    if own:
        kernel = ChapterKernel()
    else:
        nb.cells.insert(0, nbformat.v4.new_code_cell(reset_source(env), metadata={"tags": [RESET_TAG]}))
    client = kernel.client(nb, timeout_s, nb_path.parent, env)
    try:
        client.execute()
    except CellExecutionError as e:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(e))
        raise CellFailed(cell_failure_line(nb_path, e.ename, e.evalue), plain[-2500:]) from e
    except BaseException:
        kernel.shutdown()  # dead, timed out or interrupted: the next chapter starts a fresh kernel
        raise
    finally:
        if own:
            kernel.shutdown()
    out_dir.mkdir(parents=True, exist_ok=True)
    fig_dir = out_dir / "figures" / name
    if fig_dir.exists():
        shutil.rmtree(fig_dir)
    fig_dir.mkdir(parents=True)
    figures: list[Path] = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if not png:
                continue
            fname = (
                o.get("metadata", {}).get("image/png", {}).get("varcap_figure")
                or f"fig{len(figures) + 1:02d}"
            )
            p = fig_dir / f"{fname}.png"
            p.write_bytes(base64.b64decode(png))
            figures.append(p)
    (fig_dir / "manifest.json").write_text(json.dumps([p.stem for p in figures]))
    # a report page shows the prose, the figures and the tables: no code, no prompts, no parameter cells
    shown = nbformat.from_dict(nb)
    hide = {"parameters", "injected-parameters", RESET_TAG}
    shown.cells = [c for c in shown.cells if not hide & set(c.metadata.get("tags", []))]
    exporter = HTMLExporter(
        template_name="lab", exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    body, _ = exporter.from_notebook_node(shown, resources={"metadata": {"name": name}})
    # the lab template loads require.js and MathJax from a CDN; the reports need neither (figures are
    # embedded PNGs, no LaTeX), and must open with no network
    body = re.sub(r'<script src="https?://[^"]*"[^>]*>\s*</script>', "", body)
    if provenance is not None:
        from assets import provenance as prov

        body = prov.add_to_page(body, provenance)
        prov.write(fig_dir, provenance)
    html_path = out_dir / f"{name}.html"
    tmp = html_path.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(html_path)
    return Executed(html_path, figures, [], time.perf_counter() - t0)


def _chapter_deps(ch: Chapter) -> list[str | dg.AssetDep]:
    """The tables the chapter reads and, per profile partition, that profile's study assets (whose runs it
    reads itself: :func:`chapter_results`), so its upstream holds exactly its own studies."""
    return [*ch.tables, *profile_study_deps(ch.studies)]


def chapter_results(ch: Chapter, profile: str, warn: Callable[[str], None]) -> Path:
    """``data/reports/results/<chapter>-<profile>.parquet``: the ``out_study_results`` rows of the chapter's
    own studies in ``profile``, from their cached runs (what its study assets simulated); the notebook reads
    them as ``out_study_results``. ``dg.Failure`` if none of them has run."""
    pr = repro.PROFILES[profile]
    builders = repro.study_builders()
    ids = list(dict.fromkeys(s.id for base in ch.studies for s in builders[base](pr).values()))
    df = results_of(ids, pr, warn, f"studies of {ch.name} ({', '.join(ch.studies)})")
    out = reports_dir() / "results" / f"{ch.name}-{profile}.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".parquet.tmp")
    df.write_parquet(tmp)
    tmp.replace(out)
    return out


def chapter_study_ids(ch: Chapter, profile: str) -> dict[str, list[str]]:
    """Per study of ``ch`` outside the reproduction (``studies.catalogue.CHAPTER_STUDIES``), the scenario ids
    of its ``profile`` study: how the notebook picks that study's rows of ``out_study_results``."""
    from studies.catalogue import CHAPTER_STUDIES, study

    return {
        base: [s.id for s in study(repro.study_name(base, repro.PROFILES[profile]))]
        for base in ch.studies
        if base in CHAPTER_STUDIES
    }


def chapter_read_ids(ch: Chapter, profile: object) -> dict[str, list[str]]:
    """Per study the chapter reads, its ``profile`` study's scenario ids (empty for a chapter that reads no
    study or is not profiled): what its provenance block states."""
    from studies.catalogue import STUDIES, study

    if not ch.profiled or profile not in repro.PROFILES:
        return {}
    out = {}
    for base in ch.studies:
        name = repro.study_name(base, repro.PROFILES[str(profile)])
        if name in STUDIES:
            out[name] = [s.id for s in study(name)]
    return out


def report_asset(ch: Chapter) -> dg.AssetsDefinition:
    @dg.asset(
        name=f"report_{ch.name}",
        group_name="reports",
        pool=POOL,  # reads the warehouse: never while a writer holds it
        kinds={"jupyter", "html"},
        partitions_def=PROFILE_PARTITIONS if ch.profiled else None,
        deps=_chapter_deps(ch),
        code_version="1",
        description=f"{ch.title}: notebooks/{ch.name}.ipynb executed into data/reports/{ch.name}.html. "
        + ch.blurb,
    )
    def _report(
        context: dg.AssetExecutionContext,
        config: ReportConfig,
        duckdb: DuckDBResource,
        chapter_kernel: ChapterKernelResource,
    ) -> dg.MaterializeResult:
        nb = notebooks_dir() / f"{ch.name}.ipynb"
        # the profile is the partition's; the paper's numbers the chapter's charts show come from the
        # papers' claims (studies/<paper>/)
        params = {
            "profile": context.partition_key if ch.profiled else "auto",
            **({"paper": repro.FIGURES[ch.name]} if ch.name in repro.FIGURES else {}),
            **({"study_ids": chapter_study_ids(ch, context.partition_key)} if ch.profiled else {}),
        }
        from assets.provenance import chapter_provenance

        rows = chapter_results(ch, context.partition_key, context.log.warning) if ch.studies else None
        with duckdb.get_connection() as con:
            snapshot.flush(con)  # the notebook reads the snapshot: every write before this one in it
            prov = chapter_provenance(
                ch.name, str(params["profile"]), context.run_id, chapter_read_ids(ch, params["profile"]), con
            )
        key = render_key(ch.name, params, Path(duckdb.database), rows, prov)
        reused = None if config.rerender else reusable_render(ch.name, key)
        if reused is not None:
            context.log.info(f"report_{ch.name}: inputs unchanged since run {reused.run_id}; page kept")
            return _report_result(reused.executed, params["profile"], reused.run_id)
        try:
            ex = execute_notebook(
                nb,
                reports_dir(),
                Path(duckdb.database),
                params,
                config.timeout_s,
                rows,
                provenance=prov,
                kernel=chapter_kernel.get(),
            )
        except CellFailed as e:  # one line for the CLI; the cell's traceback in the run's metadata (the UI)
            raise dg.Failure(
                str(e), metadata={"cell_error": dg.MetadataValue.md(f"```\n{e.detail}\n```")}
            ) from e
        except RuntimeError as e:
            raise dg.Failure(str(e)) from e
        if not ex.figures:
            raise dg.Failure(f"{nb}: executed but drew no figure")
        record_render(ch.name, key, ex, context.run_id)
        return _report_result(ex, params["profile"])

    return _report


def _report_result(ex: Executed, profile: object, reused_from: str | None = None) -> dg.MaterializeResult:
    """A chapter's materialization: its page, profile, figures and render time (``reused_from``: the run
    that rendered the page kept because its inputs are unchanged)."""
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(ex.html_path)),
            "profile": profile,
            "figures": len(ex.figures),
            "figure_names": ", ".join(p.stem for p in ex.figures),
            "seconds": round(ex.seconds, 1),
            **({"reused_from_run": reused_from} if reused_from else {}),
            **(
                {
                    "preview": dg.MetadataValue.md(
                        f"![{first.stem}](data:image/png;base64,{base64.b64encode(first.read_bytes()).decode()})"
                    )
                }
                if (first := ex.figures[0]).stat().st_size < 400_000
                else {}
            ),
        }
    )


def render_stamp_path(name: str) -> Path:
    """Where the key of chapter ``name``'s rendered page is kept (:func:`record_render`)."""
    return reports_dir() / ".keys" / f"{name}.json"


def render_key(
    name: str,
    params: dict[str, object],
    warehouse: Path,
    rows: Path | None,
    provenance: dict[str, object],
) -> str:
    """The content key of chapter ``name``'s page (:mod:`assets.content_keys`): the code and notebooks, the
    Python environment, the injected ``params``, every table of the warehouse snapshot the notebook reads
    (what :func:`analysis.warehouse.connect` opens for ``warehouse``), its studies' rows (``rows``, a
    parquet file) and the provenance the page states but its render time and run."""
    from analysis.warehouse import snapshot_path
    from assets import content_keys as ck

    snap = snapshot_path(warehouse)
    read = snap if snap.exists() else warehouse
    stated = {k: v for k, v in provenance.items() if k not in ("rendered_utc", "run_id")}
    return ck.digest(
        name,
        ck.code_fingerprint(),
        ck.environment_fingerprint(),
        params,
        ck.database_fingerprint(read),
        ck.files_fingerprint([rows], rows.parent) if rows is not None else None,
        stated,
    )


@dataclass
class Reused:
    """A chapter's page kept as rendered: what it holds and the run that rendered it."""

    executed: Executed
    run_id: str


def _sha256(p: Path) -> str:
    import hashlib

    return hashlib.sha256(p.read_bytes()).hexdigest()


def record_render(name: str, key: str, ex: Executed, run_id: str) -> None:
    """Store ``key`` as the content key of chapter ``name``'s page just rendered (``ex``) by run ``run_id``,
    with a hash of the page and of each figure so a changed or missing file is rendered again."""
    from assets.content_keys import write_stamp

    write_stamp(
        render_stamp_path(name),
        {
            "key": key,
            "run_id": run_id,
            "seconds": ex.seconds,
            "html": {"path": ex.html_path.name, "sha256": _sha256(ex.html_path)},
            "figures": [{"path": p.name, "sha256": _sha256(p)} for p in ex.figures],
        },
    )


def reusable_render(name: str, key: str) -> Reused | None:
    """Chapter ``name``'s page on disk if it was rendered from inputs of content key ``key`` and its page,
    figures, figure manifest and provenance are as that render wrote them; else None (render again)."""
    from assets.content_keys import read_stamp
    from assets.provenance import FILE

    stamp = read_stamp(render_stamp_path(name))
    if not stamp or stamp.get("key") != key:
        return None
    out = reports_dir()
    fig_dir = out / "figures" / name
    try:
        html_path = out / stamp["html"]["path"]
        figures = [fig_dir / f["path"] for f in stamp["figures"]]
        if _sha256(html_path) != stamp["html"]["sha256"] or not (fig_dir / FILE).is_file():
            return None
        if json.loads((fig_dir / "manifest.json").read_text()) != [p.stem for p in figures]:
            return None
        if any(_sha256(p) != f["sha256"] for p, f in zip(figures, stamp["figures"], strict=True)):
            return None
    except (OSError, KeyError, TypeError, ValueError):
        return None
    if not figures:
        return None
    return Reused(Executed(html_path, figures, [], float(stamp.get("seconds", 0.0))), str(stamp["run_id"]))


report_assets = [report_asset(ch) for ch in CHAPTERS]


def index_html(chapters: list[dict], repro_table: pl.DataFrame | None, generated: str) -> str:
    """The report index: one card per chapter (title, blurb, thumbnail, figure count) and the
    reproduction table. ``chapters``: dicts with name, title, blurb, figures, thumb (relative path)."""
    cards = []
    for c in chapters:
        thumb = (
            f'<img src="{html.escape(c["thumb"])}" alt="{html.escape(c["name"])} first figure">'
            if c.get("thumb")
            else '<div class="missing">not rendered</div>'
        )
        cards.append(
            f'<a class="card" href="{html.escape(c["name"])}.html">{thumb}'
            f"<h2>{html.escape(c['title'])}</h2><p>{html.escape(c['blurb'])}</p>"
            f'<p class="n">{c["figures"]} figures</p></a>'
        )
    table = "<p>No reproduction results yet: run <code>varcap reproduce --quick</code>.</p>"
    if repro_table is not None and repro_table.height:
        head = "".join(
            f"<th>{h}</th>"
            for h in ("headline", "section", "paper", "varcap mean [95 % CI]", "band", "in band", "profile")
        )
        rows = []
        for r in repro_table.iter_rows(named=True):
            ran = r["varcap_mean"] is not None and r["varcap_mean"] == r["varcap_mean"]
            val = repro.value_text(r)
            flag = r.get("flag") or ""
            verdicts = {"in band": "yes", "out of band": "no", "effect not shown": "no (no effect shown)"}
            if r.get("verdict"):
                ok = verdicts.get(r["verdict"], r["verdict"] if r["verdict"] != "not run" else "–")
            elif r["within_band"]:
                ok = "yes"
            elif flag.startswith("degenerate"):
                ok = "degenerate"
            elif flag:
                ok = "no (no effect shown)"
            else:
                ok = "no" if ran else "–"
            title = f' title="{html.escape(flag)}"' if flag else ""
            smoke = r["profile"] == "quick"
            rows.append(
                f'<tr class="{"in" if r["within_band"] else "out"}"><td><code>{html.escape(r["headline_id"])}</code></td>'
                f"<td>{html.escape(r['section'])}</td><td>{r['anchor_value']:g} {html.escape(r['unit'])}</td>"
                f"<td>{val}</td><td>[{r['band_low']:.3g}, {r['band_high']:.3g}]</td><td{title}>{ok}</td>"
                f"<td>{html.escape(r['profile'])}{' (smoke test)' if smoke else ''}</td></tr>"
            )
        smoke_note = (
            '<p class="smoke"><b>Smoke test, not a reproduction:</b> these rows come from the <code>quick</code> '
            "profile (smaller platforms, shorter horizons, fewer replicates), which checks that the pipeline "
            "runs end to end; <code>varcap reproduce</code> runs the papers' sizes, then <code>varcap "
            "reports</code> shows them here.</p>"
            if set(repro_table["profile"]) == {"quick"}
            else ""
        )
        table = (
            f"{smoke_note}<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            "<p>Degenerate: the comparison measured nothing (no terminations in either arm). No effect shown: "
            "the mean is in the band but its 95 % interval includes no effect, where the paper claims one.</p>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>varcap reports</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }}
.grid {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 1rem; }}
.card {{ border: 1px solid #ddd; border-radius: 6px; padding: .7rem; text-decoration: none; color: inherit; }}
.card:hover {{ border-color: #4c78a8; }}
.card img {{ width: 100%; height: 170px; object-fit: contain; background: #fff; }}
.card h2 {{ font-size: 1rem; margin: .5rem 0 .2rem; }} .card p {{ font-size: .85rem; margin: .2rem 0; }}
.n {{ color: #666; }} .smoke {{ background: #fff4d6; padding: .5rem; }} .missing {{ height: 170px; background: #f4f4f4; }}
table {{ border-collapse: collapse; font-size: .85rem; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: .25rem .4rem; text-align: left; }}
tr.out td:nth-child(6) {{ color: #b22; font-weight: bold; }} tr.in td:nth-child(6) {{ color: #282; }}
</style></head><body>
<h1>varcap — study chapters</h1>
<p>Each chapter is a notebook in <code>notebooks/</code> executed by its Dagster asset
(<code>report_&lt;chapter&gt;</code>, group <code>reports</code>) against the warehouse. {html.escape(generated)}</p>
<div class="grid">{"".join(cards)}</div>
<h1>Reproduction</h1>{table}
</body></html>
"""


@dg.asset(
    group_name="reports",
    pool=POOL,
    kinds={"html"},
    partitions_def=PROFILE_PARTITIONS,
    deps=["out_reproduction", *(f"report_{ch.name}" for ch in CHAPTERS)],
    code_version="1",
    description="data/reports/index.html: every chapter report with thumbnails, and the reproduction table "
    "of its partition's profile (quick after `varcap run`, full after `varcap reproduce` and `varcap reports`).",
)
def report_index(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    out = reports_dir()
    thumbs = out / "thumbs"
    thumbs.mkdir(parents=True, exist_ok=True)
    chapters = []
    for ch in CHAPTERS:
        manifest = out / "figures" / ch.name / "manifest.json"
        figs = (
            [manifest.parent / f"{n}.png" for n in json.loads(manifest.read_text())]
            if manifest.exists()
            else []
        )
        thumb = None
        if figs and (out / f"{ch.name}.html").exists():
            shutil.copyfile(figs[0], thumbs / f"{ch.name}.png")
            thumb = f"thumbs/{ch.name}.png"
        chapters.append(
            {"name": ch.name, "title": ch.title, "blurb": ch.blurb, "figures": len(figs), "thumb": thumb}
        )
    from analysis.reproduction import rows as repro_rows  # imports altair: only when rendering

    with duckdb.get_connection() as conn:
        have = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'out_reproduction'"
        ).fetchall()[0][0]
        table = repro_rows(conn, context.partition_key) if have else None
    generated = time.strftime("Generated %Y-%m-%d %H:%M UTC.", time.gmtime())
    path = out / "index.html"
    path.write_text(index_html(chapters, table, generated), encoding="utf-8")
    missing = [c["name"] for c in chapters if not c["thumb"]]
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "profile": context.partition_key,
            "chapters": len(chapters),
            "figures": sum(c["figures"] for c in chapters),
            "missing": ", ".join(missing) or "none",
        }
    )


def readme_figures() -> dict[str, tuple[str, str]]:
    """``docs/figures/<name>.png`` → (chapter, figure name) in the report outputs (`varcap figures`)."""
    return {
        "carbon_capacity": ("ch2_capacity", "carbon_capacity"),
        "interval_survival": ("ch5_intervals", "interval_survival"),
        "thesis_ch4_goodput": ("ch4_variable_capacity", "goodput_vs_frequency"),
        "thesis_ch6_ias": ("ch6_ias", "table_6_2_terminations"),
        "reproduction": ("reproduction", "reproduction_bands"),
    }


def copy_readme_figures(dest: Path, force: bool = False) -> tuple[list[Path], list[str]]:
    """Copy the README's figures from the rendered reports into ``dest``, recording each one's provenance in
    ``dest/provenance.json``; returns (copied, kept): a figure ``dest`` holds from the full profile is kept,
    not replaced by one rendered at another profile, unless ``force``. ``FileNotFoundError`` names the first
    missing one (render the reports first: ``varcap run``)."""
    from assets import provenance as prov

    dest.mkdir(parents=True, exist_ok=True)
    record = prov.read(dest / prov.FILE) or {}
    out, kept = [], []
    for name, (ch, fig) in readme_figures().items():
        src = reports_dir() / "figures" / ch / f"{fig}.png"
        if not src.is_file():
            raise FileNotFoundError(f"{src}: not rendered; run `varcap run` (or materialize report_{ch})")
        new = prov.read(src.parent / prov.FILE) or {"chapter": ch, "profile": "unknown"}
        old = record.get(name, {})
        if not force and old.get("profile") == "full" and new.get("profile") != "full":
            kept.append(
                f"kept {dest / name}.png (full profile, commit {old.get('commit', '?')}): the rendered one is "
                f"{new.get('profile')}; `varcap figures --force` replaces it"
            )
            continue
        shutil.copyfile(src, dest / f"{name}.png")
        record[name] = {k: new.get(k) for k in ("chapter", "profile", "commit", "rendered_utc", "run_id")}
        out.append(dest / f"{name}.png")
    (dest / prov.FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return out, kept


reports_assets = [out_study_scenarios, out_workload_stats, *report_assets, report_index]


def _checks() -> list[dg.AssetChecksDefinition]:
    from assets.checks import table_checks

    return [
        *table_checks(OUT_STUDY_SCENARIOS, out_study_scenarios, prefixed=True, with_schema=False),
        *table_checks(OUT_WORKLOAD_STATS, out_workload_stats, prefixed=True, with_schema=False),
    ]


reports_checks = _checks()

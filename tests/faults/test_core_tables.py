"""Bad values never reach a core table: rows are rejected with their line, or the blocking checks on the
staging table fail the step and the previous table stays exactly as it was (items 2, 3, 9)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.faults.conftest import failure_text, materialize, register, snapshot

GAIA_HEAD = "arrival_time,length,cpus\n"
BORG = "0,,1,0,,0,u,0,1,0.1,0.1,0,0\n"  # one SUBMIT event, no run: an empty borg2011 contribution
VMTABLE = (
    "vm_id,subscription_id,deployment_id,timestamp_vm_created,timestamp_vm_deleted,max_cpu,avg_cpu,"
    "p95_max_cpu,vm_category,vm_virtual_core_count_bucket,vm_memory_gb_bucket\n"
    "v1,s,d,0,3600,10,5,8,Interactive,2,4\n"
)


def gaia_rows(n: int = 300) -> str:
    return "".join(f"{i * 10.0},1.0,2\n" for i in range(n))


def jobs_warehouse(wh: Path, write, azure: str) -> None:
    register(wh, "gaia_traces", [(write("azure-100k.csv", GAIA_HEAD + azure), "gaia/azure-100k.csv", True)])
    register(wh, "azure_vmtable", [(write("vmtable.csv", VMTABLE), "azure_v2/vmtable.csv", True)])
    register(wh, "borg2011_task_events", [(write("borg.csv", BORG), "google2011/part-0.csv", False)])


def test_nan_and_inf_durations_are_rejected_with_their_line(wh: Path, write) -> None:
    jobs_warehouse(wh, write, gaia_rows() + "5,nan,2\n6,inf,1\n7,1.0,-inf\n")
    res = materialize(wh, "core_jobs")
    assert res.success
    con = duckdb.connect(str(wh))
    assert (
        con.execute("SELECT count(*) FROM core_jobs WHERE NOT isfinite(duration_s * cores)").fetchone()[0]
        == 0
    )
    rej = con.execute("SELECT line, reason FROM core_rejects ORDER BY line").fetchall()
    assert rej == [(302, "non-finite length"), (303, "non-finite length"), (304, "non-positive cpus")]


def test_implausible_duration_fails_before_the_swap(wh: Path, write) -> None:
    jobs_warehouse(wh, write, gaia_rows())
    assert materialize(wh, "core_jobs").success
    before = snapshot(wh, "core_jobs")
    jobs_warehouse(wh, write, gaia_rows() + "5,1e300,2\n")
    res = materialize(wh, "core_jobs")
    assert not res.success
    msg = failure_text(res)
    assert "duration_plausible" in msg and "gaia/azure-100k.csv line 302" in msg
    assert "previous table kept" in msg
    assert snapshot(wh, "core_jobs") == before


def test_azure_arrival_outlier_is_rejected_not_absorbed(wh: Path, write) -> None:
    jobs_warehouse(wh, write, gaia_rows() + "1e9,1.0,2\n")
    res = materialize(wh, "core_jobs")
    assert res.success
    con = duckdb.connect(str(wh))
    n, distinct = con.execute(
        "SELECT count(*), count(DISTINCT submit_s) FROM core_jobs WHERE job_id LIKE 'azure-%'"
    ).fetchone()
    assert n == distinct == 300  # one outlier would have squeezed these into a handful of instants
    (line, reason) = con.execute("SELECT line, reason FROM core_rejects").fetchone()
    assert line == 302 and reason.startswith("arrival_time 1e9 h is an outlier")


EMAPS_HEAD = (
    "Datetime (UTC),Zone Id,Carbon Intensity gCO₂eq/kWh (LCA),Carbon Intensity gCO₂eq/kWh (direct),"
    "Renewable Percentage,Low Carbon Percentage,Data Estimated\n"
)


def emaps(hours: int = 48, extra: str = "", z: str = "") -> str:
    return (
        EMAPS_HEAD
        + "".join(
            f"2024-01-{1 + h // 24:02d} {h % 24:02d}:00:00{z},US-CAL-CISO,{200 + h},{150 + h},30,60,false\n"
            for h in range(hours)
        )
        + extra
    )


def eia(extra: str = "") -> str:
    head = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n"
    return (
        head
        + "".join(f"2022-01-01 {h:02d}:00:00+00:00,100,0,10,0,500,400,100,5,400\n" for h in range(24))
        + extra
    )


def grid_warehouse(wh: Path, write, emaps_text: str, eia_text: str) -> None:
    register(
        wh,
        "electricitymaps_hourly",
        [(write("ciso.csv", emaps_text), "electricitymaps/US-CAL-CISO_2024_hourly.csv", True)],
    )
    register(
        wh,
        "eia930_fuelmix",
        [(write("EIA930_MISO_2022.csv", eia_text), "eia930/EIA930_MISO_2022_hourly.csv", True)],
    )


@pytest.mark.parametrize(
    ("table", "bad_emaps", "bad_eia", "expect"),
    [
        # conflicting duplicate hour: the key check runs on the staging table, before the swap
        (
            "core_grid_carbon",
            emaps(extra="2024-01-01 05:00:00,US-CAL-CISO,999,1,30,60,false\n"),
            eia(),
            "unique_key failed",
        ),
        (
            "core_grid_carbon",
            emaps(extra="2024-01-03 00:00:00,US-CAL-CISO,300,1e12,30,60,false\n"),
            eia(),
            "direct_in_range",
        ),
        (
            "core_grid_carbon",
            emaps(extra="2024-01-03 00:00:00,US-CAL-CISO,300,200,250,60,false\n"),
            eia(),
            "renewable_pct_in_range",
        ),
        # an EIA fuel value of NaN: both tables it feeds refuse it (it used to pass with exit 0)
        (
            "core_grid_fuel_mix",
            emaps(),
            eia("2022-01-02 00:00:00+00:00,100,0,10,0,nan,400,100,5,400\n"),
            "mwh_finite",
        ),
        (
            "core_grid_carbon",
            emaps(),
            eia("2022-01-02 00:00:00+00:00,100,0,10,0,nan,400,100,5,400\n"),
            "gco2_per_kwh_finite",
        ),
    ],
)
def test_bad_grid_values_keep_previous_table(wh: Path, write, table, bad_emaps, bad_eia, expect) -> None:
    grid_warehouse(wh, write, emaps(), eia())
    assert materialize(wh, table).success
    before = snapshot(wh, table)
    grid_warehouse(wh, write, bad_emaps, bad_eia)
    res = materialize(wh, table)
    assert not res.success
    msg = failure_text(res)
    assert expect in msg and "previous table kept" in msg, msg
    assert snapshot(wh, table) == before


def test_price_timestamps_stripped_of_offset_keep_previous_table(wh: Path, write) -> None:
    name = "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv"
    good = "Datetime,Price (USD/MWh)\n" + "".join(
        f"2024-11-03 {h:02d}:00:00-0{5 if h < 2 else 6}:00,{20 + h}\n" for h in range(6)
    )
    register(wh, "power_prices", [(write("p.csv", good), name, True)])
    assert materialize(wh, "core_power_price").success
    before = snapshot(wh, "core_power_price")
    # the DST fall-back hour 01:00 appears twice once the offsets are gone
    stripped = "Datetime,Price (USD/MWh)\n" + "".join(
        f"2024-11-03 {h:02d}:00:00,{20 + i}\n" for i, h in enumerate([0, 1, 1, 2, 3, 4])
    )
    register(wh, "power_prices", [(write("p2.csv", stripped), name, True)])
    res = materialize(wh, "core_power_price")
    assert not res.success
    msg = failure_text(res)
    assert "unique_key failed" in msg and name in msg, msg
    assert snapshot(wh, "core_power_price") == before


def test_iso_z_timestamps_are_utc(wh: Path, write) -> None:
    grid_warehouse(wh, write, emaps(z="Z").replace(" ", "T", 0), eia())
    text = EMAPS_HEAD + "".join(
        f"2024-01-01T{h:02d}:00:00Z,US-CAL-CISO,{200 + h},{150 + h},30,60,false\n" for h in range(24)
    )
    grid_warehouse(wh, write, text, eia())
    assert materialize(wh, "core_grid_carbon").success
    con = duckdb.connect(str(wh))
    assert (
        con.execute("SELECT count(*) FROM core_grid_carbon WHERE source = 'electricitymaps'").fetchone()[0]
        == 24
    )


def test_core_builds_says_what_a_table_was_built_from_after_a_failed_rebuild(wh: Path, write) -> None:
    """raw_files lists the new (bad) file; core_builds still names the file the table holds."""
    name = "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv"
    good = write("good.csv", "Datetime,Price (USD/MWh)\n2024-01-01 00:00:00,1\n2024-01-01 01:00:00,2\n")
    register(wh, "power_prices", [(good, name, True)])
    assert materialize(wh, "core_power_price").success
    bad = write("bad.csv", "Datetime,Price (USD/MWh)\n2024-01-01 00:00:00,1\n2024-01-01 00:00:00,2\n")
    register(wh, "power_prices", [(bad, name, True)])
    assert not materialize(wh, "core_power_price").success
    con = duckdb.connect(str(wh))
    built = con.execute("SELECT sha256 FROM core_builds WHERE table_name = 'core_power_price'").fetchall()
    registered = con.execute("SELECT sha256 FROM raw_files WHERE dataset = 'power_prices'").fetchall()
    from assets.download import sha256_file

    assert built == [(sha256_file(good),)] and registered == [(sha256_file(bad),)]

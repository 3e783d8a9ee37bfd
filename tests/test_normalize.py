"""Normalizers on small fixtures: parsing, units, rejects with file and line, wholly bad files."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from assets import normalize as nz
from assets.grid import eia930, electricitymaps, power_prices
from assets.sources import AZURE_V2_VMTABLE_COLUMNS, GOOGLE_2011_TASK_EVENTS_COLUMNS


def write(tmp_path: Path, name: str, text: str, gz: bool = False) -> nz.RawFile:
    p = tmp_path / name
    data = text.encode()
    p.write_bytes(gzip.compress(data) if gz else data)
    return nz.RawFile(p, name)


def test_gaia_units_retime_and_rejects(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "azure-100k.csv",
        "arrival_time,length,cpus\n0.0,0.5,2\n10.0,1.0,4\nxx,1.0,2\n20.0,-1,2\n40.0,2.0,0\n5,1,1\n5,1,1\n",
    )
    good, rej = nz.normalize_gaia(f, "azure", retime_window_s=1001.0)
    assert good["submit_s"].to_list() == [
        0.0,
        1000.0,
        500.0,
        500.0,
    ]  # 10 h, the last good arrival -> window end
    assert good["duration_s"].to_list() == [1800.0, 3600.0, 3600.0, 3600.0]
    assert good["cores"].to_list() == [2.0, 4.0, 1.0, 1.0]
    assert rej.sort("line")["line"].to_list() == [4, 5, 6]
    reasons = dict(zip(rej["line"], rej["reason"], strict=True))
    assert reasons[4].startswith("unparseable arrival_time: 'xx'")
    assert reasons[5] == "non-positive length" and reasons[6] == "non-positive cpus"
    assert rej["source_file"].unique().to_list() == ["azure-100k.csv"]
    assert rej.filter(pl.col("line") == 4)["raw_row"][0] == "xx,1.0,2"


def test_gaia_without_retime_keeps_hours_as_seconds(tmp_path: Path) -> None:
    good, _ = nz.normalize_gaia(write(tmp_path, "pai.csv", "arrival_time,length,cpus\n1.5,0.25,1\n"), "pai")
    assert good.row(0, named=True)["submit_s"] == 5400.0 and good["duration_s"][0] == 900.0


def test_mostly_bad_file_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "bad.csv", "arrival_time,length,cpus\nx,y,z\na,b,c\n1,1,1\n")
    with pytest.raises(nz.BadFileError, match=r"bad.csv: 2 of 3 rows are malformed"):
        nz.normalize_gaia(f, "pai")


def test_missing_columns_and_unreadable_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(nz.BadFileError, match=r"cols.csv: missing columns \['length'"):
        nz.normalize_gaia(write(tmp_path, "cols.csv", "arrival_time,cpus\n1,2\n"), "pai")
    p = tmp_path / "trunc.csv.gz"
    body = b"arrival_time,length,cpus\n" + b"".join(
        f"{i},{i % 7 + 1},{i % 5 + 1}\n".encode() for i in range(5000)
    )
    gz = gzip.compress(body)
    p.write_bytes(gz[: len(gz) // 2])
    with pytest.raises(nz.BadFileError, match=r"trunc.csv.gz: cannot read file"):
        nz.normalize_gaia(nz.RawFile(p, "trunc.csv.gz"), "pai")
    with pytest.raises(nz.BadFileError, match=r"empty.csv: no data rows"):
        nz.normalize_gaia(write(tmp_path, "empty.csv", "arrival_time,length,cpus\n"), "pai")


def test_azure_vmtable_buckets_censoring_and_headerless(tmp_path: Path) -> None:
    rows = "\n".join(
        [
            "v1,s,d,0,2591400,1,1,1,Interactive,>24,>64",
            "v2,s,d,300,3900,1,1,1,Delay-insensitive,2,4",
            "v3,s,d,600,300,1,1,1,Unknown,2,4",
        ]
    )
    f = nz.RawFile(
        write(tmp_path, "vmtable.csv.gz", rows + "\n", gz=True).path,
        "vmtable.csv.gz",
        False,
        AZURE_V2_VMTABLE_COLUMNS,
    )
    good, rej = nz.normalize_azure_vmtable(f, window_s=2_592_000.0)
    g = {r["job_id"]: r for r in good.iter_rows(named=True)}
    assert g["vm-v1"]["cores"] == 24.0 and g["vm-v1"]["memory_gb"] == 64.0
    assert g["vm-v1"]["censored"] and g["vm-v1"]["left_truncated"]
    assert (
        g["vm-v2"]["submit_s"] == 300.0 and g["vm-v2"]["duration_s"] == 3600.0 and not g["vm-v2"]["censored"]
    )
    assert rej["line"].to_list() == [3] and rej["reason"][0] == "deleted at or before created"


def _events(tmp_path: Path, name: str, rows: list[tuple]) -> nz.RawFile:
    text = "\n".join(",".join("" if v is None else str(v) for v in r) for r in rows) + "\n"
    p = tmp_path / name
    p.write_text(text)
    return nz.RawFile(p, name, has_header=False, columns=GOOGLE_2011_TASK_EVENTS_COLUMNS)


def ev(ts_s: float, job: int, task: int, etype: int, cpu: float | None = 0.1, prio: int = 2) -> tuple:
    us = int(ts_s * 1e6) if ts_s > 0 else 0
    return (us, None, job, task, 7, etype, "u", 1, prio, cpu, 0.05, 0.0, 0)


def test_borg2011_runs_resubmission_censoring_and_gaps(tmp_path: Path) -> None:
    # window 1 spans 600..1600 s (shard a), window 2 spans 5000..6000 s (shard b)
    a = _events(
        tmp_path,
        "part-a",
        [
            ev(0, 1, 0, 1),  # running since before the trace: left-truncated
            ev(700, 2, 0, 0),
            ev(710, 2, 0, 1),
            ev(900, 2, 0, 2),  # evicted after 190 s
            ev(905, 2, 0, 0),
            ev(910, 2, 0, 1),
            ev(1000, 2, 0, 4),  # second run finishes after 90 s
            ev(1100, 3, 0, 0),
            ev(1200, 3, 0, 1),  # never ends in shard a; ends in shard b after a gap -> censored at 1600
            ev(1300, 4, 0, 0, cpu=0.0),
            ev(1301, 4, 0, 1, cpu=None),  # cpu 0 carried from SUBMIT -> rejected
            ev(1600, 1, 0, 4),  # task 1 finishes at 1600
            ("notanumber", None, 9, 0, 7, 1, "u", 1, 2, 0.1, 0.1, 0, 0),
        ],
    )
    b = _events(
        tmp_path, "part-b", [ev(5000, 5, 0, 0), ev(5100, 3, 0, 4), ev(5200, 5, 0, 1), ev(6000, 5, 0, 5)]
    )
    jobs, rej = nz.normalize_borg2011([a, b])
    j = {r["job_id"]: r for r in jobs.iter_rows(named=True)}
    assert (
        j["1.0.1"]["left_truncated"] and j["1.0.1"]["submit_s"] == 0.0 and j["1.0.1"]["duration_s"] == 1000.0
    )
    assert not j["1.0.1"]["censored"] and j["1.0.1"]["job_class"] == "finish"
    assert j["2.0.1"]["duration_s"] == pytest.approx(190.0) and j["2.0.1"]["job_class"] == "evict"
    assert j["2.0.1"]["submit_s"] == pytest.approx(100.0)  # SUBMIT at 700 s = 100 s after trace start
    assert j["2.0.2"]["duration_s"] == pytest.approx(90.0) and j["2.0.2"]["submit_s"] == pytest.approx(305.0)
    assert j["3.0.1"]["censored"] and j["3.0.1"]["duration_s"] == pytest.approx(400.0)
    assert j["3.0.1"]["job_class"] is None
    assert j["5.0.1"]["duration_s"] == pytest.approx(800.0) and j["5.0.1"]["job_class"] == "kill"
    assert "4.0.1" not in j
    reasons = sorted(rej["reason"].to_list())
    assert reasons == ["non-positive cpu_request", "unparseable timestamp_us: 'notanumber'"]
    assert rej.filter(pl.col("reason").str.starts_with("unparseable"))["line"].to_list() == [13]
    assert rej.filter(pl.col("reason") == "non-positive cpu_request")["line"].to_list() == [11]
    # one unit per column: borg2011's request is a fraction of the largest machine, never in `cores` (vCPU)
    assert jobs["cpu_request_norm"].min() > 0 and jobs["cores"].null_count() == jobs.height


def test_coverage_windows_merge_contiguous_shards() -> None:
    assert nz.coverage_windows([(10, 20), (20, 30), (100, 110)], max_gap_us=5) == [(10, 30), (100, 110)]


EMAPS_HEADER = (
    "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO₂eq/kWh (direct),"
    "Carbon Intensity gCO₂eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,Data Source,"
    "Data Estimated,Data Estimation Method\n"
)


def test_electricitymaps(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "US-TEX-ERCO_2024_hourly.csv",
        EMAPS_HEADER
        + "2024-04-01 00:00:00,USA,ERCOT,US-TEX-ERCO,300,350.5,40,30,x,true,TIME_SLICER\n"
        + "2024-04-01 01:00:00,USA,ERCOT,US-TEX-ERCO,300,2500,40,30,x,false,\n"
        + "2024-04-01 02:00:00,USA,ERCOT,US-TEX-ERCO,300,,40,30,x,false,\n"
        + "2024-04-01 03:00:00,USA,ERCOT,US-TEX-ERCO,300,360,40,30,x,false,\n",
    )
    good, rej = electricitymaps.normalize_electricitymaps(f)
    assert good["grid"].unique().to_list() == ["ERCOT"]
    assert good["gco2_per_kwh"].to_list() == [350.5, 360.0]
    assert good["estimated"].to_list() == [True, False]
    assert str(good["ts_utc"].dtype) == "Datetime(time_unit='us', time_zone='UTC')"
    assert dict(zip(rej["line"], rej["reason"], strict=True)) == {
        3: "intensity out of [0, 2000]: 2500.0",
        4: "unparseable Carbon Intensity gCO₂eq/kWh (LCA): '<empty>'",
    }


def test_eia_dcrl_intensity_reproduces_published_value(tmp_path: Path) -> None:
    header = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n"
    # 100 MWh wind + 100 MWh coal: (11*100 + 820*100) / 200 = 415.5 (dcrl and ipcc agree here)
    f = write(
        tmp_path,
        "EIA930_MISO_2022_hourly_fuelmix_avgCI.csv",
        header
        + "2022-01-01 00:00:00+00:00,100,0,0,0,0,100,0,0,415.5\n"
        + "2022-01-01 01:00:00+00:00,,,,,,,,,\n"
        + "2022-01-01 02:00:00+00:00,0,0,0,0,0,0,0,100,230\n",
    )
    carbon, mix, rej = eia930.normalize_eia_dcrl(f, "dcrl")
    assert carbon["grid"].to_list() == ["MISO", "MISO"]
    assert carbon["gco2_per_kwh"].to_list() == pytest.approx([415.5, 230.0])
    assert carbon["reference_gco2_per_kwh"].to_list() == [415.5, 230.0]
    assert rej["line"].to_list() == [3] and rej["reason"][0] == "no fuel value in row"
    assert mix.filter(pl.col("fuel") == "COL")["mwh"].to_list() == [100.0, 0.0]
    carbon2, _, _ = eia930.normalize_eia_dcrl(f, "ipcc_ar5")
    assert carbon2["gco2_per_kwh"].to_list() == pytest.approx([415.5, 700.0])


def test_eia_api_pages(tmp_path: Path) -> None:
    import json

    page = {
        "response": {
            "data": [
                {"period": "2024-04-01T00", "respondent": "CISO", "fueltype": "SUN", "value": "300"},
                {"period": "2024-04-01T00", "respondent": "CISO", "fueltype": "NG", "value": "100"},
                {"period": "2024-04-01T00", "respondent": "CISO", "fueltype": "BAT", "value": "0"},
                {"period": "2024-04-01T00", "respondent": "CISO", "fueltype": "NG"},
            ]
        }
    }
    p = tmp_path / "page_00000.json"
    p.write_text(json.dumps(page))
    carbon, mix, rej = eia930.normalize_eia_api_pages([nz.RawFile(p, "page_00000.json")], "ipcc_ar5")
    assert carbon["grid"].to_list() == ["CAISO"]
    assert carbon["gco2_per_kwh"][0] == pytest.approx((300 * 45 + 100 * 490) / 400)
    assert rej.height == 1 and "value" in rej["reason"][0]
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(nz.BadFileError, match="bad.json: not an EIA API v2 response"):
        eia930.normalize_eia_api_pages([nz.RawFile(bad, "bad.json")])


def test_prices_local_offsets_to_utc(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv",
        "Datetime,Price (USD/MWh)\n2024-03-10 01:00:00-06:00,10\n2024-03-10 03:00:00-05:00,11\nbad,3\n",
    )
    good, rej = power_prices.normalize_price(f)
    assert good["market"][0] == "ERCOT" and good["node"][0] == "HB_HUBAVG" and good["market_type"][0] == "DAM"
    hours = [t.hour for t in good["ts_utc"].to_list()]
    assert hours == [7, 8]  # DST jump in local time, consecutive UTC hours
    assert rej["line"].to_list() == [4]
    f2 = write(
        tmp_path,
        "CAISO_TH_NP15_GEN-APND_DAM_LMP_2024_hourly.csv",
        "Datetime,Price (USD/MWh)\n2024-01-01 08:00:00,-3.5\n",
    )
    g2, _ = power_prices.normalize_price(f2)
    assert g2["node"][0] == "TH_NP15_GEN-APND" and g2["usd_per_mwh"][0] == -3.5 and g2["ts_utc"][0].hour == 8

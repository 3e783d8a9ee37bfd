"""Raw file -> core table normalizers (pure polars; no Dagster, no DuckDB), one module per domain.

Every normalizer returns ``(good, rejects)``: ``good`` has exactly the columns of its core table schema
(see :mod:`assets.schema`), ``rejects`` has ``table_name, source_file, line, reason, raw_row``. ``line``
is the 1-based line of the row in the upstream CSV (header counted), so a reject can be found in the
original file. A file that cannot be read at all, lacks required columns, or whose rows are mostly bad
raises :class:`BadFileError` naming the file; callers then keep the previous table untouched.

Modules: :mod:`~assets.normalize.base` (reading, reject splitting), :mod:`~assets.normalize.jobs` (GAIA,
Azure VM table, Borg 2011), :mod:`~assets.normalize.grid` (Electricity Maps, EIA-930, WattTime),
:mod:`~assets.normalize.prices` (market prices). Every public name is re-exported here.
"""

from assets.normalize.base import (
    REJECT_COLUMNS,
    BadFileError,
    RawFile,
    empty_rejects,
    read_text_table,
    require_columns,
    split_rejects,
)
from assets.normalize.grid import (
    CARBON_COLUMNS,
    EMISSION_FACTORS,
    FUEL_MIX_COLUMNS,
    FUELS,
    intensity_expr,
    normalize_eia_api_pages,
    normalize_eia_dcrl,
    normalize_electricitymaps,
    normalize_watttime,
)
from assets.normalize.jobs import (
    EVICT,
    FAIL,
    FINISH,
    JOB_COLUMNS,
    KILL,
    LOST,
    SCHEDULE,
    SUBMIT,
    TERMINAL,
    TRACE_START_US,
    coverage_windows,
    normalize_azure_vmtable,
    normalize_borg2011,
    normalize_gaia,
)
from assets.normalize.prices import PRICE_COLUMNS, normalize_price

__all__ = [
    "CARBON_COLUMNS",
    "EMISSION_FACTORS",
    "EVICT",
    "FAIL",
    "FINISH",
    "FUELS",
    "FUEL_MIX_COLUMNS",
    "JOB_COLUMNS",
    "KILL",
    "LOST",
    "PRICE_COLUMNS",
    "REJECT_COLUMNS",
    "SCHEDULE",
    "SUBMIT",
    "TERMINAL",
    "TRACE_START_US",
    "BadFileError",
    "RawFile",
    "coverage_windows",
    "empty_rejects",
    "intensity_expr",
    "normalize_azure_vmtable",
    "normalize_borg2011",
    "normalize_eia_api_pages",
    "normalize_eia_dcrl",
    "normalize_electricitymaps",
    "normalize_gaia",
    "normalize_price",
    "normalize_watttime",
    "read_text_table",
    "require_columns",
    "split_rejects",
]

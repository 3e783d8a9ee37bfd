"""Raw file -> core table normalizers (pure polars; no Dagster, no DuckDB), one module per domain.

Every normalizer returns ``(good, rejects)``: ``good`` has exactly the columns of its core table schema
(see :mod:`assets.schema`), ``rejects`` has ``table_name, source_file, line, reason, raw_row``. ``line``
is the 1-based line of the row in the upstream CSV (header counted), so a reject can be found in the
original file. A file that cannot be read at all, lacks required columns, or whose rows are mostly bad
raises :class:`BadFileError` naming the file; callers then keep the previous table untouched.

Modules: :mod:`~assets.normalize.base` (reading, reject splitting), :mod:`~assets.normalize.jobs` (GAIA,
Azure VM table, Borg 2011). Every public name is re-exported here. A grid feed's normalizer lives in its
own module (:mod:`assets.grid`), with its dataset and checks.
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

__all__ = [
    "EVICT",
    "FAIL",
    "FINISH",
    "JOB_COLUMNS",
    "KILL",
    "LOST",
    "REJECT_COLUMNS",
    "SCHEDULE",
    "SUBMIT",
    "TERMINAL",
    "TRACE_START_US",
    "BadFileError",
    "RawFile",
    "coverage_windows",
    "empty_rejects",
    "normalize_azure_vmtable",
    "normalize_borg2011",
    "normalize_gaia",
    "read_text_table",
    "require_columns",
    "split_rejects",
]

"""Pure statistics and altair chart builders over polars frames or a read-only DuckDB connection.

Importing the package keeps ``rfc3987_syntax`` out of the process (``sys.modules`` entry None, unless it is
already imported). altair validates charts with jsonschema, whose format checkers import that module when it
is installed (jupyter-events asks for it); it builds a lark grammar at import, which made ``import altair``
take 3.2–3.4 CPU s instead of 0.7–0.8 (measured 2026-12-03), in every process that draws a chart. No chart
schema of varcap uses the ``iri`` formats it checks; jsonschema then leaves those two formats unchecked.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

"""The README documents every warehouse table and column that the schema module defines."""

from pathlib import Path

from assets.schema import ALL_TABLES

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_documents_every_table_and_column() -> None:
    for schema in ALL_TABLES.values():
        assert f"### `{schema.name}`" in README, schema.name
        for col in schema.columns:
            assert f"| `{col.name}` | {col.sql_type} | {col.unit} |" in README, (schema.name, col.name)

"""Dagster Definitions, resources, the download client and the ``varcap`` CLI."""

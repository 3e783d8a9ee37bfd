"""Thin Dagster assets and checks, by layer: raw, core (later capacity, intervals, sim, reports)."""

"""DuckDB access to result rows: a connection with a ``rows`` table, the metrics policies are
compared by, and per-group values."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

ANALYSIS_COLUMNS = ("instance", "seed", "horizon", "policy", "regret", "final_gap")
METRICS = ("regret", "final_gap")
"""Columns a comparison can rank by (lower is better for both): the policy regret of the pulls
made, and the final-model gap of the arm deployed at the end
(:meth:`risingbandits.regret.Oracle.final_gap`)."""


def check_metric(metric: str) -> str:
    """``metric`` if it is one of :data:`METRICS` (it is then safe to put in a query)."""
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r} is not allowed: use one of {', '.join(METRICS)}")
    return metric


HorizonKeys = Sequence[tuple[str, int, int]]
"""(instance id, horizon, key) rows: the analysis groups the row of that instance and horizon
under ``key`` (a sweep with horizon percents: ``Spec.horizon_keys``)."""


def analysis_select(
    con: duckdb.DuckDBPyConnection, keys: HorizonKeys | None = None, source: str = "read_parquet(?)"
) -> str:
    """SQL of the analysis columns of ``source`` (default: the Parquet files given as the
    query's one parameter; or a relation registered on ``con``); with ``keys`` each row's
    ``horizon`` is replaced by its key (registered on ``con``)."""
    if keys is None:
        return f"SELECT {', '.join(ANALYSIS_COLUMNS)} FROM {source}"
    ids, horizons, values = zip(*keys, strict=True) if keys else ((), (), ())
    table = pa.table(
        {
            "instance": pa.array(ids, pa.string()),
            "horizon": pa.array(horizons, pa.int64()),
            "key": pa.array(values, pa.int64()),
        }
    )
    con.register("horizon_keys", table)
    columns = ", ".join(
        "k.key AS horizon" if c == "horizon" else f"r.{c}" for c in ANALYSIS_COLUMNS
    )
    return (
        f"SELECT {columns} FROM {source} r JOIN horizon_keys k "
        "ON r.instance = k.instance AND r.horizon = k.horizon"
    )


def connect(
    parts: Sequence[str | Path], keys: HorizonKeys | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a table ``rows``: the columns the analysis needs,
    read once from the given Parquet files (every later query runs in memory), horizons
    replaced by ``keys`` when given."""
    if not parts:
        raise ValueError("no result files to read")
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE rows AS {analysis_select(con, keys)}", [[str(p) for p in parts]])
    except duckdb.BinderException as exc:
        con.close()
        found = re.search(r'column "([^"]+)" not found', str(exc))
        column = found.group(1) if found else "?"
        raise ValueError(
            f"result files without the column {column!r} were written by an earlier version of "
            "risingbandits: run the sweep again into a new directory"
        ) from None
    return con


def in_list(values: Sequence[int]) -> str:
    """A SQL ``IN (...)`` list of integers (built from ints only: no injection possible)."""
    return "(" + ", ".join(str(int(v)) for v in values) + ")"


def grouped_values(
    con: duckdb.DuckDBPyConnection, value: str, source: str
) -> dict[tuple[str, int], np.ndarray]:
    """``{(policy, horizon): values}`` of the expression ``value`` over the relation ``source``
    (a table name or a parenthesised query with ``policy``, ``horizon``, ``instance``, ``seed``
    columns). Values come in (instance, seed) order, so seeded resampling is reproducible."""
    keys = con.sql(
        f"SELECT policy, horizon, count(*) FROM {source} GROUP BY ALL ORDER BY policy, horizon"
    ).fetchall()
    if not keys:  # e.g. no unit where every policy ran yet
        return {}
    values = con.sql(
        f"SELECT {value} AS v FROM {source} ORDER BY policy, horizon, instance, seed"
    ).fetchnumpy()
    chunks = np.split(np.asarray(values["v"], np.float64), np.cumsum([k[2] for k in keys])[:-1])
    return {(str(p), int(h)): chunk for (p, h, _), chunk in zip(keys, chunks, strict=True)}

"""DuckDB access to result rows: a connection with a ``rows`` table, the metrics policies are
compared by, and per-group values."""

from __future__ import annotations

from collections.abc import Sequence

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


def analysis_select(con: duckdb.DuckDBPyConnection, source: str, keys: HorizonKeys | None) -> str:
    """SQL of the analysis columns of ``source`` (a relation registered on ``con``); with
    ``keys`` each row's ``horizon`` is replaced by its key (registered on ``con``)."""
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
    parts: Sequence[pa.Table], keys: HorizonKeys | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a table ``rows``: the columns the analysis needs of
    the given part rows, horizons replaced by ``keys`` when given. The rows are those the
    store's full check read (:meth:`~risingbandits.experiments.Store.verified_rows`): no file is
    read again, so nothing can change between the check and the query, and no path reaches
    DuckDB (``read_parquet`` expands ``* ? [ ]`` in paths: a store in ``res[12]`` read
    ``res1``'s parts)."""
    if not parts:
        raise ValueError("no result rows to read")
    for table in parts:
        missing = [c for c in ANALYSIS_COLUMNS if c not in table.column_names]
        if missing:
            raise ValueError(
                f"result files without the column {missing[0]!r} were written by an earlier "
                "version of risingbandits: run the sweep again into a new directory"
            )
    tables = [t.select(ANALYSIS_COLUMNS) for t in parts]
    rows = pa.concat_tables(tables, promote_options="permissive")  # int beside float: float
    con = duckdb.connect()
    try:
        con.register("parts", rows)
        con.execute(f"CREATE TABLE rows AS {analysis_select(con, 'parts', keys)}")
        con.unregister("parts")
    except duckdb.Error:
        con.close()
        raise
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

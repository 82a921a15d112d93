"""The kinds of measurement, one module each: the pgbench ceiling, the
closed-loop peak, the open-loop rate, the database-delay sweep, the server
matrix, the proxy comparison, the replica comparison and --tune. Each plans
its steps, measures a step into a typed record (bench/records.py) and writes
its section of the report (section(results) -> Markdown lines; CHARTS: the
chart functions of bench/report/charts/ it draws, with their file suffixes).

Adding a mode is adding its module here and its name to MODES, in the place
its section takes in the report."""

from bench.modes import (
    ceiling,
    db_delay,
    open_loop,
    peak,
    proxy_cost,
    replica_sweep,
    server_matrix,
    tune,
)

# In the report's order: what a run compared first, then the per-section tables.
MODES = [ceiling, tune, proxy_cost, replica_sweep, db_delay, server_matrix, open_loop, peak]

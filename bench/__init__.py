"""The measuring part of benchmark.sh: wrk against each app, pgbench against
Postgres alone, checked, tabled, charted and saved under results/.

    ./benchmark.sh quart        # or: python -m bench quart
"""

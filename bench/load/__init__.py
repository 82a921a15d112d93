"""The load generators: wrk (closed loop), bench.load.openloop (open loop),
pgbench (the database alone), and one measured run of either against an app."""

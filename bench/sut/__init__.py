"""The system measured: the apps under their servers, the database, the delay
proxy in between, and the processes that run them."""

"""Code shared by the four apps: settings, the request contract, the pools and
rating clients (sync and async, one shape), and each interface's plumbing."""

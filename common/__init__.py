"""Code shared by the four apps: settings, the request contract, the PoolWrapper."""

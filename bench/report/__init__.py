"""The results made readable: Markdown tables, PNG charts, runs compared."""

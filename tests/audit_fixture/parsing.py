"""Parsing a supplier's HTML page: pure computation, no I/O at all."""

from html.parser import HTMLParser


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.prices = []

    def handle_data(self, data):
        if data.startswith("$"):
            self.prices.append(float(data[1:]))

    def fetch(self):
        """The prices parsed so far (a name, not a request)."""
        return list(self.prices)


def fetch_rating(prices):
    """A rating from prices: arithmetic, whatever its name says."""
    return round(sum(prices) / max(len(prices), 1), 1)

"""tools/serve.py's advice: a sync app served directly gets a warning."""

import pytest

from infra import apps, production
from tools.serve import APPS, direct_warning

# Served by gunicorn's sync workers: one connection each (their serve.sh).
SYNC = ("flask", "falcon")


@pytest.mark.parametrize("app", APPS)
def test_a_sync_app_served_directly_is_warned_about(app):
    warning = direct_warning(app, proxied=False)
    if app in SYNC:
        assert "--proxy" in warning and app in warning
    else:
        assert warning is None
    assert direct_warning(app, proxied=True) is None


def test_the_warning_follows_serve_sh():
    for app in APPS:
        sync = "--worker-class sync" in apps.get(app).serve.read_text()
        assert sync == (app in SYNC) == production.read(app).holds_thread

"""tools/serve.py's advice: a sync app served directly gets a warning."""

import pytest

from tools import ROOT
from tools.serve import APPS, SYNC_APPS, direct_warning


@pytest.mark.parametrize("app", APPS)
def test_a_sync_app_served_directly_is_warned_about(app):
    warning = direct_warning(app, proxied=False)
    if app in SYNC_APPS:
        assert "--proxy" in warning and app in warning
    else:
        assert warning is None
    assert direct_warning(app, proxied=True) is None


def test_the_sync_apps_are_the_gunicorn_sync_ones():
    for app in APPS:
        sync = "--worker-class sync" in (ROOT / f"{app}_app" / "serve.sh").read_text()
        assert sync == (app in SYNC_APPS)

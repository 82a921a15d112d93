"""Property test driven by api/openapi.yaml: schemathesis generates requests,
valid and invalid, and every answer must be inside the contract: no 5xx, a
documented status, the documented JSON schema and content type."""

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

SCHEMA = schemathesis.openapi.from_path(Path(__file__).parents[2] / "api" / "openapi.yaml")


@SCHEMA.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api(case, server):
    # A schema-valid review of a film that does not exist is rightly refused
    # (422): whether a film exists is data, not schema, so that one check is off.
    case.call_and_validate(base_url=server.url, excluded_checks=[positive_data_acceptance])

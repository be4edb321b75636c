from tests.gateway.standing.conftest import gateway_logs_on_failure, pytest_runtest_makereport  # noqa: F401

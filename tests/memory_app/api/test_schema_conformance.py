"""The API against its own OpenAPI document, fuzzed in process with schemathesis.

Every operation gets generated requests, valid and invalid, with every
check schemathesis has: no 500, and every status, header, content type and
body as the document says.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from config.wsgi import application
from memory_app.services.principals import api_key_issue
from tests.factories import UserFactory

# Two answers depend on data no schema can describe, so a well-formed request
# may be a 400 there (and only there): a cursor is opaque (only the server
# knows which strings it issued), and a redaction names text or a span that
# must occur in that document.
CONTENT_DEPENDENT = ("promotions_list", "document_redact")
CONFIG = SchemathesisConfig.from_dict(
    {
        "operations": [
            {
                "include-operation-id": operation_id,
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "400", "401", "403", "404", "429"]
                    }
                },
            }
            for operation_id in CONTENT_DEPENDENT
        ]
    }
)
# The stream answers for as long as the client listens, which a fuzzer never
# stops doing; its inputs are tested in test_events_stream.py.
schema = schemathesis.openapi.from_wsgi("/api/v1/schema", application, config=CONFIG).exclude(
    operation_id="events_stream"
)


@pytest.fixture
def keep_the_test_connection():
    """As Django's test client does: requests must not close the connection
    that holds the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def auth_header(db, settings, keep_the_test_connection):
    settings.MEMORY_API_READ_RATE = settings.MEMORY_API_WRITE_RATE = "100000/minute"
    user = UserFactory(username="fuzzer", reviewer=True)
    return {"Authorization": f"Token {api_key_issue(user=user).raw}"}


@schema.parametrize()
# Bounded and derandomized: about 1,800 requests in all (most from the
# coverage phase's boundary cases), the same on every run, so a failure
# reproduces exactly.
@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_operation_conforms_to_the_schema(case, auth_header):
    # As an agent runtime does, a call names its conversation (the
    # conversation store needs one) unless the case is testing that header.
    generated = {name.lower() for name in case.headers or {}}
    if "x-memory-conversation" not in generated:
        auth_header = {**auth_header, "X-Memory-Conversation": "conv-fuzz"}
    case.call_and_validate(headers=auth_header)

"""The Dream jobs page names only the stores its viewer may read: the
canary's figures do not tell of a system the viewer has no grant on."""

import pytest

from memory_app.dreams import canary as canary_module
from memory_app.dreams.runner import dream_execute
from memory_app.models import DreamJob
from memory_app.services.principals import system_grant_set
from tests.factories import UserFactory, WorkspaceStoreFactory, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def secret_store(db):
    grant = system_grant_set(system_slug="secret-ledger", team="ledger-readers", level="read")
    store = grant.system.store
    make_document(store, "runbooks/rollback", "Roll back a bad ledger deploy with the script.")
    return store


@pytest.fixture
def drifted(secret_store, monkeypatch):
    """Two canary runs over a workspace store and the secret system's store,
    the second with its ranking turned around: drift in both."""
    shared = WorkspaceStoreFactory(slug="open-runbooks")
    for n in range(3):
        make_document(shared, f"runbooks/r{n}", f"Roll back a bad deploy, variant {n}.")
    make_document(secret_store, "runbooks/again", "Roll back a bad deploy of the ledger.")
    dream_execute(DreamJob.objects.create(kind="canary").pk)
    real_rerank = canary_module.rerank
    monkeypatch.setattr(
        canary_module, "rerank", lambda c, q, m: list(reversed(real_rerank(c, q, m)))
    )
    job = dream_execute(DreamJob.objects.create(kind="canary").pk)
    assert {"open-runbooks", secret_store.slug} <= {d["store"] for d in job.stats["drift"]}
    return job


def test_a_user_without_the_grant_sees_no_trace_of_the_system_store(
    client, owner, secret_store, drifted
):
    client.force_login(owner)
    assert client.get("/systems/secret-ledger/").status_code == 404
    html = client.get("/dreams/").content.decode()
    assert "open-runbooks" in html
    assert secret_store.slug not in html and "secret-ledger" not in html
    assert "stores: 2;" in html  # this one and the seeded conventions


def test_a_reader_of_the_system_sees_its_store_named(client, secret_store, drifted):
    client.force_login(UserFactory(username="reader", teams=["ledger-readers"]))
    html = client.get("/dreams/").content.decode()
    assert secret_store.slug in html and "stores: 3;" in html

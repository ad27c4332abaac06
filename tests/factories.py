"""Test data, built through the same services the product uses."""

import factory
from django.contrib.auth import get_user_model

from memory_app.models import MemoryStore, Scope, Trust
from memory_app.services.documents import document_create, embedding_for
from memory_app.services.principals import principal_upsert

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")

    @classmethod
    def _create(cls, model_class, *args, reviewer=False, service_account=False, **kwargs):
        return principal_upsert(
            username=kwargs["username"],
            password=PASSWORD,
            reviewer=reviewer,
            service_account=service_account,
            act_on_behalf=kwargs.get("act_on_behalf", False),
            superuser=kwargs.get("is_superuser", False),
            teams=kwargs.get("teams", ()),
        )


class WorkspaceStoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = MemoryStore
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"workspace_test_{n}")
    scope = Scope.WORKSPACE
    name = factory.LazyAttribute(lambda store: store.slug)


def make_document(store, path="notes/example", content="Example content.", **fields):
    """A document as a write would leave it, embedding included."""
    fields.setdefault("title", path.rsplit("/", 1)[-1].replace("-", " "))
    fields.setdefault("trust", Trust.AGENT_DRAFT)
    fields.setdefault("author", None)
    fields.setdefault(
        "embedding", embedding_for(fields["title"], fields.get("recall_hint", ""), content)
    )
    return document_create(store=store, path=path, content=content, **fields)

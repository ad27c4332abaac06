"""memory_user refuses what the database or the login page would refuse,
with a message and before it writes anything."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from memory_app.models import ApiKey

pytestmark = pytest.mark.django_db


def _refused(*args) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("memory_user", *args, stdout=io.StringIO(), stderr=io.StringIO())
    return str(refused.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dana", "--reviewer", "--key-name", "k" * 101], "--key-name is at most 100"),
        (["dana", "--reviewer", "--team", "t" * 151], "A team name is 1 to 150"),
        (["dana", "--team", "ops\x01"], "printable characters"),
        (["bad user/!name"], "letters, digits and @ . + - _ only"),
        (["dana", "--password", "password"], "too common"),
        (["dana", "--password", "pw\udcff"], "must be UTF-8"),
    ],
)
def test_a_refused_argument_writes_nothing(args, message):
    assert message in _refused(*args)
    assert not get_user_model().objects.filter(username__in=["dana", "bad user/!name"]).exists()
    assert not Group.objects.exists()
    assert not ApiKey.objects.exists()

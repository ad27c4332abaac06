"""`tasks.py run`'s admin password: set once, kept across runs."""

import tasks


def test_a_configured_password_is_kept_for_runs_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "DATA_DIR", tmp_path)
    monkeypatch.setenv("MEMORY_ADMIN_PASSWORD", "chosen-by-the-operator")
    assert tasks.admin_password() == ("chosen-by-the-operator", True)
    tasks.admin_password_keep("chosen-by-the-operator")
    assert tasks.admin_password() == ("chosen-by-the-operator", False)
    monkeypatch.delenv("MEMORY_ADMIN_PASSWORD")
    assert tasks.admin_password() == ("chosen-by-the-operator", False)
    assert (tmp_path / "admin_password").stat().st_mode & 0o777 == 0o600


def test_without_one_a_password_is_made_once(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "DATA_DIR", tmp_path)
    monkeypatch.delenv("MEMORY_ADMIN_PASSWORD", raising=False)
    made, new = tasks.admin_password()
    assert new and len(made) >= 16
    tasks.admin_password_keep(made)
    assert tasks.admin_password() == (made, False)


def test_a_password_the_account_has_not_taken_is_not_kept(tmp_path, monkeypatch):
    """`run` keeps it only after memory_user set it: one the password rules
    refused must not come back as the printed login of the next run."""
    monkeypatch.setattr(tasks, "DATA_DIR", tmp_path)
    monkeypatch.setenv("MEMORY_ADMIN_PASSWORD", "password")
    assert tasks.admin_password() == ("password", True)
    monkeypatch.delenv("MEMORY_ADMIN_PASSWORD")
    made, new = tasks.admin_password()
    assert new and made != "password"
    assert not (tmp_path / "admin_password").exists()

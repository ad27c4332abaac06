#!/usr/bin/env python3
"""The project's commands, needing nothing but Python 3.12+ and pip.

    python3 tasks.py run     install, migrate, seed, create a login, serve, and run a
                             Celery worker with the dream schedule (MEMORY_WORKER=false: no worker)
    python3 tasks.py test    install test needs (and Debian's chromium) and run the whole suite
    python3 tasks.py lint    ruff check and format check
    python3 tasks.py stop    stop the embedded PostgreSQL

Each installs into ./.venv (override with VENV) and skips the install when
pyproject.toml has not changed since the last one.
"""

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# Before any definition: annotations such as `str | Path` are evaluated when
# the module runs, so on an older python3 they would fail before this could
# say what is needed. (Only syntax that Python 3.7 compiles may appear below.)
if sys.version_info < (3, 12):  # noqa: UP036 (run by whatever python3 the machine has)
    sys.exit(f"Python 3.12 or newer is needed; this is {sys.version.split()[0]}.")

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("VENV", ROOT / ".venv"))
PYTHON = VENV / "bin" / "python"
DATA_DIR = Path(os.environ.get("MEMORY_DATA_DIR", ROOT / "var"))
WORKER_ARGS = ("-A", "config", "worker", "--beat", "--pool", "solo", "--loglevel", "warning")


def sh(*args: str | Path, **kwargs) -> None:
    result = subprocess.run([str(a) for a in args], cwd=ROOT, check=False, **kwargs)
    if result.returncode != 0:
        sys.exit(result.returncode)


def install(extra: str = "") -> None:
    """Create the venv and install the project (with an extra) when needed."""
    if not PYTHON.exists():
        sh(sys.executable, "-m", "venv", VENV)
    targets = [f".[{extra}]" if extra else "."]
    manifests = [ROOT / "pyproject.toml"]
    if extra == "test":
        # The client library (client/) is tested against the live server.
        targets.append("./client")
        manifests.append(ROOT / "client" / "pyproject.toml")
    digest = hashlib.sha256(
        b"".join(path.read_bytes() for path in manifests) + " ".join(targets).encode()
    ).hexdigest()
    stamp = VENV / f".installed-{extra or 'base'}"
    if stamp.exists() and stamp.read_text() == digest:
        return
    sh(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    for target in targets:
        sh(PYTHON, "-m", "pip", "install", "--quiet", "-e", target)
    stamp.write_text(digest)


def manage(*args: str) -> None:
    sh(PYTHON, "manage.py", *args)


def admin_password() -> tuple[str, bool]:
    """The local admin's password and whether it is new: MEMORY_ADMIN_PASSWORD
    if set, else the one kept in the data folder, else one made now. A new
    one is kept (`admin_password_keep`) only once the admin has it, so a
    password the account refused is never printed as the login later."""
    path = DATA_DIR / "admin_password"
    kept = path.read_text().strip() if path.exists() else None
    password = os.environ.get("MEMORY_ADMIN_PASSWORD") or kept or secrets.token_urlsafe(12)
    return password, password != kept


def admin_password_keep(password: str) -> None:
    """Keep the admin's password for later runs without the variable."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / "admin_password"
    path.write_text(password)
    path.chmod(0o600)


def run() -> None:
    install()
    manage("migrate", "--noinput")
    password, changed = admin_password()
    if changed:
        sh(
            PYTHON,
            "manage.py",
            "memory_user",
            "admin",
            "--password",
            password,
            "--reviewer",
            "--superuser",
            "--no-key",
        )
        admin_password_keep(password)
    address = os.environ.get("MEMORY_LISTEN", "127.0.0.1:8000")
    print(
        f"\nAgent Memory Admin: http://{address}/\n"
        f"Log in as: admin / {password}\n"
        f"(kept in {DATA_DIR / 'admin_password'}; "
        f"API keys: {PYTHON.relative_to(ROOT) if PYTHON.is_relative_to(ROOT) else PYTHON} "
        "manage.py memory_user NAME --service-account)\n",
        flush=True,
    )
    os.environ.setdefault("DJANGO_DEBUG", "true")
    # One ASGI server process (Django, /mcp and the event stream; no reloader),
    # so a stop reaches the process that holds the database connection.
    host, _, port = address.rpartition(":")
    server = subprocess.Popen(
        [
            str(PYTHON),
            "-m",
            "config.serve",
            "config.asgi:application",
            "--host",
            host,
            "--port",
            port,
            # The app logs each request in a line of its own (README, "Logs").
            "--no-access-log",
        ],
        cwd=ROOT,
    )
    worker = None
    if os.environ.get("MEMORY_WORKER", "true").strip().lower() not in ("0", "false", "no", "off"):
        # A worker with beat inside: embeddings and dream jobs on schedule,
        # over the filesystem broker unless CELERY_BROKER_URL names one.
        worker = Restarted([str(PYTHON), "-m", "celery", *WORKER_ARGS], name="worker")

    def stop_children(*_args) -> None:
        # The server first: it stops while the worker has its grace period.
        if server.poll() is None:
            server.terminate()
        if worker is not None:
            worker.stop()

    signal.signal(signal.SIGTERM, stop_children)
    # A closed terminal: the worker, in a session of its own, would not hear it.
    signal.signal(signal.SIGHUP, stop_children)
    try:
        while server.poll() is None:
            if worker is not None:
                worker.keep_running()
            time.sleep(1)
    except KeyboardInterrupt:
        server.wait()  # Ctrl-C reached the server too
        return
    finally:
        stop_children()
        server.wait()
        # Stop the embedded server unless another process still uses it.
        subprocess.run([str(PYTHON), "manage.py", "dbserver", "release"], cwd=ROOT, check=False)
    if server.returncode > 0:
        # It stopped on its own (a port in use, a wrong MEMORY_LISTEN): say so
        # to whatever started this, as its own output already said why.
        sys.exit(server.returncode)


class Restarted:
    """A child process started again whenever it stops on its own.

    Without this a worker that dies takes embeddings, dream jobs and webhook
    deliveries with it while the pages keep working, and nothing says so. A
    child that stops soon after its start waits longer before each new start
    (up to a minute), so a worker that cannot start does not spin.

    The child runs in a process group of its own, stopped as a whole: the
    worker's embedded beat is a process the worker forks, and one left behind
    by a worker that died would be a second scheduler, running on even after
    this one stops.
    """

    STEADY_SECONDS = 60.0
    LONGEST_PAUSE = 60.0
    # How long the group has to stop on SIGTERM before SIGKILL: a worker's
    # warm shutdown waits for its task, and a task killed mid-way is delivered
    # again (tasks are acknowledged only when they finish).
    GRACE_SECONDS = 10.0

    def __init__(self, command: list[str], *, name: str) -> None:
        self.command, self.name = command, name
        self.pause = 1.0
        self.due = 0.0
        self.stopping = False
        self._start()

    def _start(self) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(self.command, cwd=ROOT, start_new_session=True)

    def keep_running(self) -> None:
        """Start the child again if it has stopped and its pause is over.
        What the child forked is stopped as soon as the child is seen stopped."""
        if self.stopping or self.process.poll() is None:
            return
        if not self.due:
            ran = time.monotonic() - self.started
            self._stop_group()
            self.pause = (
                1.0 if ran >= self.STEADY_SECONDS else min(self.pause * 2, self.LONGEST_PAUSE)
            )
            self.due = time.monotonic() + self.pause
            print(
                f"The {self.name} stopped (exit code {self.process.returncode}); "
                f"starting it again in {self.pause:.0f} s.",
                file=sys.stderr,
                flush=True,
            )
        if time.monotonic() >= self.due:
            self.due = 0.0
            self._start()

    def stop(self) -> None:
        """Stop the child and everything it started, for good.

        Safe to call again, as the final cleanup does after a signal handler
        has: a child started in between is stopped too."""
        self.stopping = True
        self._stop_group()

    def _stop_group(self) -> None:
        """SIGTERM the child's process group, then SIGKILL what is left of it
        after the grace period. The group outlives the child itself while any
        process it forked is still running."""
        group = self.process.pid
        deadline = time.monotonic() + self.GRACE_SECONDS
        try:
            os.killpg(group, signal.SIGTERM)
            while time.monotonic() < deadline:
                # Reaped, the child leaves the group; a zombie would keep it.
                self.process.poll()
                os.killpg(group, 0)
                time.sleep(0.05)
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass  # no process of the group is left
        self.process.wait()


def ensure_chromium() -> None:
    """The browser tests drive the system's Chromium; install Debian's if missing."""
    if shutil.which("chromium"):
        return
    if shutil.which("apt-get") and os.geteuid() == 0:
        sh("apt-get", "update", "-qq")
        sh("apt-get", "install", "-y", "-qq", "chromium")
        return
    sys.exit(
        "The browser tests need Chromium: install your system's `chromium` package "
        "(on Debian: apt-get install -y chromium) and run this again."
    )


def test(*pytest_args: str) -> None:
    install("test")
    ensure_chromium()
    sh(PYTHON, "-m", "pytest", *pytest_args)


def lint() -> None:
    install("dev")
    sh(PYTHON, "-m", "ruff", "check", ".")
    sh(PYTHON, "-m", "ruff", "format", "--check", ".")


def stop() -> None:
    install()
    manage("dbserver", "stop")


COMMANDS = {"run": run, "test": test, "lint": lint, "stop": stop}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    if sys.argv[1] == "test":
        test(*sys.argv[2:])
    else:
        COMMANDS[sys.argv[1]]()

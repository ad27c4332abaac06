"""`tasks.py run` starts its worker again when it stops on its own, and
stops what the worker forked (its embedded beat) together with it."""

import os
import signal
import sys
import time
from pathlib import Path

import psutil

import tasks


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_child_that_stops_is_started_again_after_its_pause(capsys):
    child = tasks.Restarted([sys.executable, "-c", "raise SystemExit(3)"], name="worker")
    child.pause = 0.05
    first = child.process
    wait_until(lambda: first.poll() is not None)

    child.keep_running()
    assert child.process is first  # pausing first
    assert "The worker stopped (exit code 3); starting it again" in capsys.readouterr().err

    wait_until(lambda: (child.keep_running(), child.process is not first)[1])
    child.stop()


def test_a_child_that_keeps_failing_waits_longer_each_time():
    child = tasks.Restarted([sys.executable, "-c", "raise SystemExit(1)"], name="worker")
    child.pause = 0.05
    pauses = []
    for _ in range(3):
        current = child.process
        wait_until(lambda current=current: current.poll() is not None)
        child.keep_running()
        pauses.append(child.pause)
        wait_until(lambda current=current: (child.keep_running(), child.process is not current)[1])
    child.stop()

    assert pauses == [0.1, 0.2, 0.4]


def test_a_stopped_child_is_not_started_again():
    child = tasks.Restarted([sys.executable, "-c", "import time; time.sleep(30)"], name="worker")
    child.stop()
    stopped = child.process

    child.keep_running()

    assert child.process is stopped
    assert stopped.returncode is not None


# A stand-in for a worker with its embedded beat: a process that forks a
# long-lived child, writes the child's pid to argv[1] and sleeps. With
# argv[2] == "stubborn" the child ignores SIGTERM.
FORKS_A_CHILD = """
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    if sys.argv[2] == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(300)
    os._exit(0)
with open(sys.argv[1] + ".new", "w") as f:
    f.write(str(pid))
os.rename(sys.argv[1] + ".new", sys.argv[1])
time.sleep(300)
"""


def start_forking(tmp_path, mode: str = "plain") -> tuple[tasks.Restarted, Path]:
    pid_file = tmp_path / "forked.pid"
    child = tasks.Restarted(
        [sys.executable, "-c", FORKS_A_CHILD, str(pid_file), mode], name="worker"
    )
    child.GRACE_SECONDS = 0.5
    return child, pid_file


def forked_pid(pid_file: Path) -> int:
    wait_until(pid_file.exists)
    pid = int(pid_file.read_text())
    pid_file.unlink()
    return pid


def running(pid: int) -> bool:
    """Whether the process runs; a zombie (left for an init that may not reap
    it) has stopped."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_what_a_child_that_was_killed_forked_is_stopped_before_it_starts_again(tmp_path):
    child, pid_file = start_forking(tmp_path)
    try:
        child.pause = 0.05
        first, forked = child.process, forked_pid(pid_file)
        os.kill(first.pid, signal.SIGKILL)
        wait_until(lambda: first.poll() is not None)
        assert running(forked)  # orphaned, it would run on as a second beat

        child.keep_running()

        wait_until(lambda: not running(forked), timeout=2.0)
        wait_until(lambda: (child.keep_running(), child.process is not first)[1])
        again = forked_pid(pid_file)
    finally:
        child.stop()

    wait_until(lambda: not running(again), timeout=2.0)


def test_stopping_a_child_stops_what_it_forked_even_if_it_ignores_sigterm(tmp_path):
    child, pid_file = start_forking(tmp_path, "stubborn")
    try:
        forked = forked_pid(pid_file)
    finally:
        child.stop()

    assert child.process.returncode == -signal.SIGTERM
    wait_until(lambda: not running(forked), timeout=2.0)

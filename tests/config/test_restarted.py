"""`tasks.py run` starts its worker again when it stops on its own."""

import sys
import time

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

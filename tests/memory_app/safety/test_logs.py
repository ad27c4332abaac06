"""Log dumps are recognised by structure, in any common format, past 30 lines."""

import json
import random
from bisect import bisect_right

import pytest

from memory_app.safety import logs, scan_fields


def log_dump(text: str) -> bool:
    findings = scan_fields({"content": text}, conversation_store=False)
    return any(f.detector == "raw_log_dump" for f in findings)


def _lines(make, n: int) -> str:
    rng = random.Random(n)
    return "\n".join(make(i, rng) for i in range(n))


FORMATS = {
    "syslog": lambda i, r: (
        f"Nov 25 10:{i % 60:02}:{r.randint(0, 59):02} web-1 sshd[{r.randint(100, 9999)}]: "
        f"Accepted publickey for deploy from 10.0.{r.randint(0, 9)}.{r.randint(1, 254)} port 22"
    ),
    "journald": lambda i, r: (
        f"Nov 25 10:00:{i % 60:02} host systemd[1]: Started Session {r.randint(1, 900)} of user ci."
    ),
    "nginx_access": lambda i, r: (
        f"10.1.{r.randint(0, 9)}.{r.randint(1, 254)} - - [25/Nov/2026:10:00:{i % 60:02} +0000] "
        f'"GET /api/v1/items/{r.randint(1, 999)} HTTP/1.1" 200 {r.randint(100, 9999)} "-" "curl"'
    ),
    "nginx_error": lambda i, r: (
        f"2026/11/25 10:00:{i % 60:02} [error] {r.randint(100, 999)}#0: *{i} connect() failed "
        "(111: Connection refused) while connecting to upstream"
    ),
    "log4j": lambda i, r: (
        f"2026-11-25 10:00:{i % 60:02},{r.randint(0, 999):03} INFO  [main] o.a.k.Server - "
        f"started partition {r.randint(0, 50)}"
    ),
    "python_logging": lambda i, r: (
        f"WARNING:urllib3.connectionpool:Retrying (Retry(total={r.randint(0, 4)})) after "
        f"connection broken by 'ReadTimeoutError' pid={r.randint(100, 999)}"
    ),
    "klog": lambda i, r: (
        f"I1125 10:00:{i % 60:02}.{r.randint(0, 999999):06}       1 "
        f"controller.go:{r.randint(10, 500)}] Synced pod default/web-{r.randint(0, 9)}"
    ),
    "hdfs": lambda i, r: (
        f"081109 2036{i % 60:02} {r.randint(10, 999)} INFO dfs.DataNode$PacketResponder: "
        f"PacketResponder {r.randint(0, 2)} for block blk_{r.randint(10**9, 10**10)} terminating"
    ),
    "spark": lambda i, r: (
        f"17/06/09 20:10:{i % 60:02} INFO executor.Executor: Finished task {i}.0 in stage "
        f"{r.randint(0, 9)}.0 (TID {r.randint(0, 999)})"
    ),
    "logcat": lambda i, r: (
        f"11-25 10:00:{i % 60:02}.{r.randint(0, 999):03}  {r.randint(100, 999)}  "
        f"{r.randint(100, 999)} I ActivityManager: Start proc {r.randint(1000, 9999)}:com.app/u0a1"
    ),
    "windows_event": lambda i, r: (
        f"Information\t11/25/2026 10:00:{i % 60:02} AM\tService Control Manager\t7036\tNone\t"
        "The Windows Update service entered the running state."
    ),
    "proxifier": lambda i, r: (
        f"[11.25 10:00:{i % 60:02}] chrome.exe - proxy.example.com:5070 open through proxy "
        f"proxy.example.com:5070 HTTPS"
    ),
    "healthapp": lambda i, r: (
        f"20261125-10:00:{i % 60:02}:{r.randint(0, 999)}|Step_LSC|30002312|"
        f"onStandStepChanged {r.randint(1000, 9999)}"
    ),
    # Unix seconds as the stamp: supercomputer RAS logs, a message broker
    "bgl": lambda i, r: (
        f"- {1117838570 + i} 2005.06.03 R02-M1-N{r.randint(0, 9)}-C:J12-U11 RAS KERNEL INFO "
        f"{r.randint(1, 9)} ddr errors(s) detected and corrected on rank 0"
    ),
    "hpc": lambda i, r: (
        f"{134681 + i} node-{r.randint(1, 300)} unix.hw state_change.unavailable "
        f"{1077804742 + i} 1 Component State Change: Component is in the unavailable state"
    ),
    "epoch_prefixed": lambda i, r: (
        f"{1795822681 + i}: New connection from 10.0.0.{r.randint(1, 254)} on port 1883."
    ),
    "json_lines": lambda i, r: json.dumps(
        {"ts": 1764064800 + i, "level": "info", "msg": "request done", "status": 200}
    ),
    "key_value": lambda i, r: (
        f'level=info msg="request done" method=GET status=200 duration_ms={r.randint(1, 99)} '
        f"time=2026-11-25T10:00:{i % 60:02}Z"
    ),
}


@pytest.mark.parametrize("name", FORMATS)
def test_thirty_one_log_lines_are_a_dump_in_every_format(name):
    assert log_dump(_lines(FORMATS[name], 31)), name


@pytest.mark.parametrize("name", FORMATS)
def test_thirty_log_lines_are_a_snippet_in_every_format(name):
    assert not log_dump(_lines(FORMATS[name], 30)), name


def test_a_snippet_is_fine_even_between_blank_lines():
    text = _lines(FORMATS["log4j"], 30).replace("\n", "\n\n")
    assert not log_dump(text)


NOT_LOGS = {
    "python_code": lambda i, r: (
        f"    def handler_{i}(self, request):\n        return self.items[{i}]"
    ),
    "markdown_table": lambda i, r: f"| metric_{i} | float | {r.randint(0, 100)} ms | gauge |",
    "markdown_list": lambda i, r: f"- Step {i}: restart the worker after 10:00 if it stalls.",
    "prose": lambda i, r: (
        f"On day {i} the team reviewed {r.randint(1, 9)} incidents and agreed to keep the "
        "rollout window short."
    ),
    "yaml": lambda i, r: f"service_{i}:\n  replicas: {r.randint(1, 5)}\n  port: {8000 + i}",
    "csv": lambda i, r: f"{i},{r.randint(0, 99)},{r.random():.3f},north",
    # ten-digit ids as cells of a CSV or a path, not a field of their own
    "csv_of_ids": lambda i, r: f"{1000000000 + r.randint(0, 10**8)},{r.randint(0, 99)},north",
    "paths_with_ids": lambda i, r: f"s3://exports/{1000000000 + i}/part-{i:05}.parquet",
    "changelog_list": lambda i, r: f"- 2026-11-{i % 28 + 1:02}: bumped the ledger to v2.{i}",
}


@pytest.mark.parametrize("name", NOT_LOGS)
def test_long_text_that_is_not_a_log_is_never_a_dump(name):
    assert not log_dump(_lines(NOT_LOGS[name], 80)), name


def test_prose_with_a_few_timestamps_is_not_a_dump():
    prose = _lines(NOT_LOGS["prose"], 60)
    text = prose + "\n" + "\n".join(_lines(FORMATS["syslog"], 5).split("\n"))
    assert not log_dump(text)


def test_a_stack_trace_continues_the_log_it_belongs_to():
    head = _lines(FORMATS["log4j"], 10)
    frames = "\n".join(f"\tat com.acme.Worker.step{i}(Worker.java:{i + 10})" for i in range(25))
    assert log_dump(head + "\njava.lang.IllegalStateException: boom\n" + frames)


def test_a_python_traceback_continues_the_log_it_belongs_to():
    head = _lines(FORMATS["python_logging"], 10)
    frames = "\n".join(
        f'  File "/srv/app/worker.py", line {i + 10}, in step_{i}\n    run_step_{i}(batch)'
        for i in range(12)
    )
    text = f"{head}\nTraceback (most recent call last):\n{frames}\nValueError: boom"
    assert log_dump(text)


def test_the_signatures_find_every_line_the_pattern_fits():
    """Each signed pattern fits the lines its finder finds in the whole text."""
    pieces = [
        *("12:30:45", "1:02:03.5", "2026-11-25", "2026/1/2 10:00", "25/May/2015", "Mar 30"),
        *("151125 120000", "INFO", "WARNING", "ERR", "\tWarning\t", "I1125 ", " 12 34 E "),
        *("I/Tag( 12):", "pid=12", "PID: 3", "thread_id=5", "proce\u017fs=1", "p\u0131d=4"),
        *("\u0661\u0662:\u0663\u0660:\u0664\u0665", "12\u00a0V\u00a0", "\u2003", "\u00e9", "?"),
        *("\u212a", "\u0130", "x", " ", "\n", "\t", ":", "=", "/", "0"),
    ]
    rng = random.Random(20261125)
    texts = ["\n".join(make(i, rng) for i in range(40)) for make in FORMATS.values()]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    for text in texts:
        lines = [*text.split("\n"), ""]
        found = logs._Lines(text + "\n", lines)
        for signed in logs._SIGNED:
            everywhere = {
                bisect_right(found.starts, match.start()) - 1
                for match in signed.finder.finditer(found.text)
            }
            assert found.signed[signed] == everywhere, text

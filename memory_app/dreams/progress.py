"""Progress of a running dream job, as the Dream jobs page shows it."""

import time

from memory_app.models import DreamJob


class Progress:
    """Counts work done and writes it to the job row now and then, not per item."""

    INTERVAL_SECONDS = 1.0

    def __init__(self, job: DreamJob) -> None:
        self.job = job
        self._saved_at = 0.0

    def total(self, n: int) -> None:
        self.job.progress_total = n
        self._save(force=True)

    def advance(self, n: int = 1) -> None:
        self.job.progress_done += n
        self._save()

    def flush(self) -> None:
        """Write the count now: a run that fails still shows how far it got."""
        self._save(force=True)

    def _save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._saved_at >= self.INTERVAL_SECONDS:
            DreamJob.objects.filter(pk=self.job.pk).update(
                progress_done=self.job.progress_done, progress_total=self.job.progress_total
            )
            self._saved_at = now

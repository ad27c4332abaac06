# Thin wrappers around tasks.py, which needs only Python 3.12+ and pip.
PYTHON ?= python3

.PHONY: run test lint format stop worker beat

run:
	$(PYTHON) tasks.py run

test:
	$(PYTHON) tasks.py test

lint:
	$(PYTHON) tasks.py lint

format:
	.venv/bin/ruff format . && .venv/bin/ruff check --fix .

stop:
	$(PYTHON) tasks.py stop

worker:
	.venv/bin/celery -A config worker --loglevel=INFO

beat:
	.venv/bin/celery -A config beat --loglevel=INFO

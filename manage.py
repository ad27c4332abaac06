#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A setting from the environment is wrong: its message says which
        # and how; the traceback through the settings module says nothing more.
        sys.exit(f"Configuration error: {error}")


if __name__ == "__main__":
    main()

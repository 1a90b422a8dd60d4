"""The settings the tests run with: the site's own, after this test process is given its
own Redis database and var/ directory (tests/parallel.isolate_this_process). pytest-django
reads the settings before any conftest runs, so the isolation happens here."""

from tests.parallel import isolate_this_process

isolate_this_process()

from chatsite.settings import *  # noqa: E402, F403

"""``python -m app.cli``: the ``qsg`` command line, as the processes the project starts run it
(``qsg up``'s queue managers, the nightly job's subprocess, the tests)."""

from app.cli import main

main()

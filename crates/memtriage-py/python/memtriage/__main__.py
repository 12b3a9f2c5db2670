"""``python -m memtriage ARGS`` runs the ``memtriage`` command."""

from ._cli import main

main()

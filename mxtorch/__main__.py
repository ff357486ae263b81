"""``python -m mxtorch``: the ``mxtorch`` command line (see ``mxtorch.cli``)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())

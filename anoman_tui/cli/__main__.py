"""`python -m anoman_tui.cli`: the `anoman-tui` command."""

import sys

from anoman_tui.cli import main

# Guarded: a tool that imports every module of the package (the tests do) must not run it.
if __name__ == "__main__":
    sys.exit(main())

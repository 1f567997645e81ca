"""`python -m anoman_tui.cli`: the `anoman-tui` command."""

import sys

from anoman_tui.cli import main

sys.exit(main())

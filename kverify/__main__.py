"""`python -m kverify` is the `kverify` command."""
import sys

from kverify.cli import main

sys.exit(main())

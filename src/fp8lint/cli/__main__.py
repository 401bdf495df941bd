import sys

from fp8lint.cli import main

sys.exit(main())

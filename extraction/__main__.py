import sys

from extraction.cli import main

sys.exit(main())

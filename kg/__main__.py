import sys

from kg.cli import main

sys.exit(main())

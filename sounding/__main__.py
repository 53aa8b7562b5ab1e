import sys

from sounding.cli import main

sys.exit(main())

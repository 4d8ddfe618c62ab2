import sys

from webometrics.cli import main

sys.exit(main())

import sys

from orchestrator.cli.main import main

sys.exit(main())

from reclaimstudy.cli import main

raise SystemExit(main())

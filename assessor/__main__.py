from assessor.cli import main

raise SystemExit(main())

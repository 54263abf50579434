"""`python -m assessor.evals.generate [CASES.yaml]`: rewrite the labelled synthetic case file."""

from assessor.evals.generate.case_table import main

raise SystemExit(main())

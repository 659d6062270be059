"""`python -m orbench_play.evaluation`: the whole evaluation suite (`make eval`)."""

from .suite import main

raise SystemExit(main())

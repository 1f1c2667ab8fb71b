from rubric_studio.cli import main

raise SystemExit(main())

from csvsum.cli import main

raise SystemExit(main())

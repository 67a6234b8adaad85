from linecount.cli import main

raise SystemExit(main())

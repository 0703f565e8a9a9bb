from torchdevlint.cli import main

raise SystemExit(main())

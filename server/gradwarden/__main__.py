from gradwarden.cli import main

raise SystemExit(main())

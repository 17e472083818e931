from dsh_sidecar.cli import main

raise SystemExit(main())

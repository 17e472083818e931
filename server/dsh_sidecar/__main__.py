import sys

try:
    from dsh_sidecar.launch import main
except KeyboardInterrupt:
    # Ctrl-C while the command is still loading: the one line ``serve`` prints, no traceback.
    sys.stderr.write("dsh-sidecar: stopped by SIGINT\n")
    raise SystemExit(130) from None

raise SystemExit(main())

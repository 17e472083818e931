"""Start the dsh-sidecar for the VS Code extension, from the libraries bundled beside this file.

    python launch.py --probe                       print what this interpreter can run, as JSON
    python launch.py --import-strategy S serve ... run `dsh-sidecar serve ...`

The extension runs this file instead of `python -m dsh_sidecar`: a script's own directory, not
the current directory, is the first entry of `sys.path`, so a `dsh_sidecar` folder in an opened
workspace cannot stand in for the sidecar. The libraries are in `../libs` (filled by
`pip install --target` when the extension is packaged; absent in a development checkout, where the
interpreter's own environment provides the sidecar).

This file must parse on any Python, even one far too old to run the sidecar, so that the probe
can report the version instead of a syntax error: no f-strings, annotations or walrus here.
"""

import json
import os
import sys

MINIMUM = (3, 11)
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "libs")
STRATEGIES = ("useBundled", "fromEnvironment")


def use_bundled_libraries(strategy):
    """Put the bundled libraries on sys.path: first (useBundled) or as a fallback."""
    if not os.path.isdir(LIBS):
        return False
    if strategy == "fromEnvironment":
        sys.path.append(LIBS)
    else:
        sys.path.insert(0, LIBS)
    return True


def probe(strategy):
    info = {
        "executable": sys.executable,
        "version": list(sys.version_info[:3]),
        "supported": tuple(sys.version_info[:2]) >= MINIMUM,
        "bundled": use_bundled_libraries(strategy),
    }
    if info["supported"]:
        try:
            import lsprotocol  # noqa: F401  (the serve path needs both)
            import pygls  # noqa: F401

            import dsh_sidecar

            info["sidecar"] = {
                "version": getattr(dsh_sidecar, "__version__", "?"),
                "path": os.path.dirname(os.path.abspath(dsh_sidecar.__file__)),
            }
        except Exception as exc:
            info["importError"] = type(exc).__name__ + ": " + str(exc)
    sys.stdout.write(json.dumps(info) + "\n")
    return 0


def main(argv):
    strategy = "useBundled"
    if argv[:1] == ["--import-strategy"] and len(argv) >= 2:
        strategy = argv[1]
        argv = argv[2:]
    if strategy not in STRATEGIES:
        sys.stderr.write("launch.py: unknown import strategy " + repr(strategy) + "\n")
        return 2
    if argv[:1] == ["--probe"]:
        return probe(strategy)
    if tuple(sys.version_info[:2]) < MINIMUM:
        sys.stderr.write(
            "dsh-sidecar needs Python 3.11 or newer; "
            + sys.executable
            + " is "
            + ".".join(str(n) for n in sys.version_info[:3])
            + "\n"
        )
        return 3
    use_bundled_libraries(strategy)
    from dsh_sidecar.cli import main as sidecar_main

    return sidecar_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The files a Codex shell command reads and writes (hooks/shell_commands.py)."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shlex
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_sidecar.hooks import shell_commands
from dsh_sidecar.hooks.shell_commands import (
    ShellTouches,
    argv_touches,
    patch_touches,
    shell_touches,
)

CWD = "/proj"


def reads(command: str, cwd: str = CWD) -> tuple[str, ...]:
    return shell_touches(command, cwd).reads


def writes(command: str, cwd: str = CWD) -> tuple[str, ...]:
    return shell_touches(command, cwd).writes


# --- read commands ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat pkg/sub/x.py", ["/proj/pkg/sub/x.py"]),
        ("cat -n a b", ["/proj/a", "/proj/b"]),
        ("tac a", ["/proj/a"]),
        ("nl -ba src/x.py", ["/proj/src/x.py"]),
        ("nl -b a src/x.py", ["/proj/src/x.py"]),
        ("head -n 40 a.py", ["/proj/a.py"]),
        ("head -40 a.py b.py", ["/proj/a.py", "/proj/b.py"]),
        ("head --lines=5 a", ["/proj/a"]),
        ("head --lines 5 a", ["/proj/a"]),
        ("tail -n +20 a.py", ["/proj/a.py"]),
        ("tail -f log", ["/proj/log"]),
        ("wc -l a b", ["/proj/a", "/proj/b"]),
        ("less +G a", ["/proj/a"]),
        ("more a", ["/proj/a"]),
        ("bat -r 1:20 --style=plain a.rs", ["/proj/a.rs"]),
        ("batcat -l py a", ["/proj/a"]),
        ("sed -n '1,200p' a.py", ["/proj/a.py"]),
        ("sed -n 1,80p a.py b.py", ["/proj/a.py", "/proj/b.py"]),
        ("sed -n -e 1p -e 2p a", ["/proj/a"]),
        ("sed --expression=1p a", ["/proj/a"]),
        ("sed -f script.sed a", ["/proj/script.sed", "/proj/a"]),
        ("awk '{print $1}' a", ["/proj/a"]),
        ("awk -F: -v x=1 '{print}' a n=2 b", ["/proj/a", "/proj/b"]),
        ("grep foo a.py", ["/proj/a.py"]),
        ("grep -rn 'def main' src", ["/proj/src"]),
        ("grep -e foo -e bar a", ["/proj/a"]),
        ("grep -f pats.txt a", ["/proj/pats.txt", "/proj/a"]),
        ("grep -A 3 -B2 foo a", ["/proj/a"]),
        ("grep --include '*.py' -r foo pkg", ["/proj/pkg"]),
        ("grep foo", []),
        ("egrep 'a|b' x", ["/proj/x"]),
        ("rg -n TODO src/ tests/x.py", ["/proj/src", "/proj/tests/x.py"]),
        ("rg -g '*.py' -t py TODO pkg", ["/proj/pkg"]),
        ("rg -nC3 TODO a", ["/proj/a"]),
        ("rg --files pkg", ["/proj/pkg"]),
        ("rg TODO", []),
        ("rg -- -pattern-with-dash a", ["/proj/a"]),
        ("diff -u a b", ["/proj/a", "/proj/b"]),
        ("cmp a b", ["/proj/a", "/proj/b"]),
        ("sort -k2 a", ["/proj/a"]),
        ("cat < in.txt", ["/proj/in.txt"]),
        ("cat -", []),
        ("cat /dev/null /dev/stdin", []),
        ("cat ../up/x", ["/up/x"]),
        ("cat /abs//path/./x", ["/abs/path/x"]),
        ("cat //x", ["/x"]),
        ("/usr/bin/cat a", ["/proj/a"]),
        # A listing looks into its operands (issue 32, item 4: a list into a directory is a touch).
        ("ls a b", ["/proj/a", "/proj/b"]),
        ("ls -la --color lib", ["/proj/lib"]),
        ("tree -L 2 docs", ["/proj/docs"]),
        ("find -L web lib -name '*.ts' -type f", ["/proj/web", "/proj/lib"]),
        ("find -D tree -O3 web", ["/proj/web"]),
        ("find . ( -name x )", ["/proj"]),
        ("find", []),
        ("echo a > /dev/null", []),
    ],
)
def test_read_commands(command: str, expected: list[str]) -> None:
    assert list(reads(command)) == expected


# --- structure --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat a && cat b || cat c; cat d | cat e & cat f", ["a", "b", "c", "d", "e", "f"]),
        ("cat a\ncat b\n\ncat c", ["a", "b", "c"]),
        ("cat a;cat b", ["a", "b"]),
        ("cat a&&cat b", ["a", "b"]),
        ("cat a b a", ["a", "b"]),
        ("cat a # b c", ["a"]),
        ("cat a#b", ["a#b"]),
        ("cat a \\\n b", ["a", "b"]),
        ("FOO=1 BAR=x cat a", ["a"]),
        ("env FOO=1 cat a", ["a"]),
        ("env -u X -i cat a", ["a"]),
        ("command cat a", ["a"]),
        ("command -v cat", []),
        ("nohup nice -n 5 cat a", ["a"]),
        ("timeout 10 cat a", ["a"]),
        ("timeout -s KILL 10 cat a", ["a"]),
        ("sudo -u me cat a", ["a"]),
        ("stdbuf -oL cat a", ["a"]),
        ("time cat a", ["a"]),
        ("exec cat a", ["a"]),
        ("if [ -f a ]; then cat b; else cat c; fi", ["b", "c"]),
        ("while read l; do cat x; done < list", ["list", "x"]),
        ("for f in a b; do cat $f; done", []),
        ("{ cat a; cat b; }", ["a", "b"]),
        ("! cat a", ["a"]),
        ("xargs cat < list", ["list"]),
    ],
)
def test_structure(command: str, expected: list[str]) -> None:
    assert sorted(reads(command)) == sorted(os.path.join(CWD, e) for e in expected)


def test_order_is_the_commands_order() -> None:
    assert reads("cat b; cat a; cat b") == ("/proj/b", "/proj/a")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd pkg && cat x.py", ["/proj/pkg/x.py"]),
        ("cd pkg; cat x.py; cd ..; cat y", ["/proj/pkg/x.py", "/proj/y"]),
        ("cd /other && cat x", ["/other/x"]),
        ("cd -P pkg && cat x", ["/proj/pkg/x"]),
        ("(cd sub && cat a); cat b", ["/proj/sub/a", "/proj/b"]),
        ("cd $DIR && cat x /abs", ["/abs"]),
        ("cd && cat x", []),
        ("cd - && cat x", []),
        ("cd ~ && cat x", []),
        ("pushd pkg && cat x && popd && cat y", ["/proj/pkg/x"]),
        ("cd $DIR; cd /known; cat x", ["/known/x"]),
        ("env -C sub cat a; cat b", ["/proj/sub/a", "/proj/b"]),
        ("env --chdir=/e cat a", ["/e/a"]),
    ],
)
def test_the_directory_follows_cd(command: str, expected: list[str]) -> None:
    assert list(reads(command)) == expected


@pytest.mark.parametrize(
    "command",
    [
        "bash -lc 'cat pkg/x.py'",
        "bash -c 'cat pkg/x.py'",
        '/bin/bash -lc "cat pkg/x.py"',
        "sh -c 'cat pkg/x.py' sh",
        "zsh -lc 'cat pkg/x.py'",
        "bash -e -o pipefail -c 'cat pkg/x.py'",
        "bash --noprofile --norc -lc 'cat pkg/x.py'",
        "bash -lc 'bash -c \"cat pkg/x.py\"'",
        "bash -lc 'cd pkg && cat x.py'",
        'bash -lc "cd pkg\ncat x.py"',
    ],
)
def test_shell_wrappers_are_read_through(command: str) -> None:
    assert reads(command) == ("/proj/pkg/x.py",)


def test_a_cd_inside_a_wrapped_script_stays_inside() -> None:
    assert reads("bash -lc 'cd pkg && cat a'; cat b") == ("/proj/pkg/a", "/proj/b")


def test_a_script_with_an_expansion_is_not_guessed() -> None:
    # The shell would substitute $D; the text without it would name the wrong file.
    assert reads('bash -lc "cat $D/x"') == ()
    assert reads("bash script.sh") == ()


def test_nesting_is_bounded() -> None:
    command = "cat x"
    for _ in range(10):
        command = "bash -c " + shlex.quote(command)
    assert reads(command) == ()
    shallow = "bash -c " + shlex.quote("bash -c " + shlex.quote("cat x"))
    assert reads(shallow) == ("/proj/x",)


# --- words ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat 'a b'", ["a b"]),
        ('cat "a b"', ["a b"]),
        ("cat a\\ b", ["a b"]),
        ("cat 'a'\"b\"c", ["abc"]),
        ('cat "a\\"b"', ['a"b']),
        ('cat "a\\nb"', ["a\\nb"]),
        ("cat $'a\\tb'", ["a\tb"]),
        ("cat $'it\\'s'", ["it's"]),
        ('cat $"x"', ["x"]),
        ('cat "it\'s"', ["it's"]),
        ("cat ''", []),
        ('cat $HOME/x ${X}y $(pwd)/z `pwd`/w "$A"', []),
        ("cat *.py a?.txt [ab].c {a,b}.py", []),
        ("cat ~/x ~user/y", []),
        ("cat a~b", ["a~b"]),
        ("cat '$HOME/x'", ["$HOME/x"]),
        ("cat \"$(echo ')')\" a", ["a"]),
        ("cat $((1+2)) a", ["a"]),
        ("diff <(sort a) b", ["b"]),
        ("cat ✓/ü.md", ["✓/ü.md"]),
    ],
)
def test_words(command: str, expected: list[str]) -> None:
    assert list(reads(command)) == [os.path.join(CWD, e) for e in expected]


# --- writes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected_reads", "expected_writes"),
    [
        ("echo hi > out.txt", [], ["out.txt"]),
        ("echo hi >> out.txt", [], ["out.txt"]),
        ("echo hi >out.txt", [], ["out.txt"]),
        ("echo hi >| out.txt", [], ["out.txt"]),
        ("make &> build.log", [], ["build.log"]),
        ("make &>> build.log", [], ["build.log"]),
        ("make 2> err.log 2>&1 1>&-", [], ["err.log"]),
        ("make >& both.log", [], ["both.log"]),
        ("cat a 1> b", ["a"], ["b"]),
        ("cat a 2>/dev/null", ["a"], []),
        ("cat <> rw", [], ["rw"]),
        ("cat <<< 'not a file'", [], []),
        ("echo 2 >x", [], ["x"]),
        ("printf x | tee out.txt", [], ["out.txt"]),
        ("printf x | tee -a a b", [], ["a", "b"]),
        ("touch new.py", [], ["new.py"]),
        ("touch -d yesterday f", [], ["f"]),
        ("rm -rf build old.py", [], ["build", "old.py"]),
        ("cp a b", ["a"], ["b"]),
        ("cp -r a b dest/", ["a", "b"], ["dest"]),
        ("cp -t dest a b", ["a", "b"], ["dest"]),
        ("mv a b", [], ["a", "b"]),
        ("sed -i 's/a/b/' f.txt", [], ["f.txt"]),
        ("sed -i.bak -e 's/a/b/' f.txt", [], ["f.txt"]),
        ("sed --in-place 's/a/b/' f.txt", [], ["f.txt"]),
        ("sed -i '' 's/a/b/' f.txt", [], ["f.txt"]),
        ("sort -o out in", ["in"], ["out"]),
        ("cat > new.py <<'EOF'\nprint('hi')\nEOF", [], ["new.py"]),
        ("cat <<EOF > new.py\nx $y\nEOF\ncat z", ["z"], ["new.py"]),
    ],
)
def test_writes(command: str, expected_reads: list[str], expected_writes: list[str]) -> None:
    touches = shell_touches(command, CWD)
    assert list(touches.reads) == [os.path.join(CWD, e) for e in expected_reads]
    assert list(touches.writes) == [os.path.join(CWD, e) for e in expected_writes]


PATCH = """*** Begin Patch
*** Update File: pkg/a.py
@@ def f():
-    return "don't"
+    return 'do'
*** Add File: pkg/new.py
+*** Update File: not/a/header.py
+x = 1
*** Delete File: old.py
*** Update File: pkg/b.py
*** Move to: pkg/c.py
@@
-a
+b
*** End Patch"""
PATCH_WRITES = (
    "/proj/pkg/a.py",
    "/proj/pkg/new.py",
    "/proj/old.py",
    "/proj/pkg/b.py",
    "/proj/pkg/c.py",
)


def test_the_whole_command_as_a_patch() -> None:
    # What Codex's own apply_patch tool carries.
    assert shell_touches(PATCH, CWD) == ShellTouches((), PATCH_WRITES)
    assert patch_touches(PATCH, CWD) == ShellTouches((), PATCH_WRITES)


@pytest.mark.parametrize(
    "command",
    [
        f"apply_patch <<'EOF'\n{PATCH}\nEOF",
        f'apply_patch <<"EOF"\n{PATCH}\nEOF\n',
        f"apply_patch <<EOF\n{PATCH}\nEOF",
        f"apply_patch << 'PATCH'\n{PATCH}\nPATCH",
        f"apply_patch <<-'EOF'\n{PATCH}\n\t\tEOF",
        f"applypatch <<'EOF'\n{PATCH}\nEOF",
        f"apply_patch {shlex.quote(PATCH)}",
        "bash -lc " + shlex.quote(f"apply_patch <<'EOF'\n{PATCH}\nEOF"),
        f"cd pkg/.. && apply_patch <<'EOF'\n{PATCH}\nEOF",
    ],
)
def test_apply_patch(command: str) -> None:
    assert shell_touches(command, CWD) == ShellTouches((), PATCH_WRITES)


def test_apply_patch_relative_to_cd() -> None:
    command = (
        "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.py\n+1\n*** End Patch\nEOF"
    )
    assert writes(command) == ("/proj/sub/x.py",)


def test_a_heredoc_body_is_not_commands() -> None:
    command = "python - <<'PY'\ncat secret; echo 'unbalanced\nPY\ncat after"
    assert shell_touches(command, CWD) == ShellTouches(("/proj/after",), ())


def test_two_heredocs_on_one_line() -> None:
    command = "cat <<A - <<B > out\nline of a\nA\nline of b\nB\ncat c"
    assert shell_touches(command, CWD) == ShellTouches(("/proj/c",), ("/proj/out",))


def test_a_heredoc_without_its_end_runs_to_the_end() -> None:
    command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.py\n+cat y"
    assert shell_touches(command, CWD) == ShellTouches((), ("/proj/x.py",))


def test_a_heredoc_operator_without_a_delimiter() -> None:
    assert shell_touches("cat << ; cat a\ncat b", CWD) == ShellTouches(("/proj/a", "/proj/b"), ())


def test_a_heredoc_on_the_last_line_has_no_body() -> None:
    assert shell_touches("cat <<EOF", CWD) == ShellTouches()


def test_a_path_both_read_and_written_is_in_both() -> None:
    assert shell_touches("sort -o f f", CWD) == ShellTouches(("/proj/f",), ("/proj/f",))


# --- argv and cwd -----------------------------------------------------------------------------


def test_argv() -> None:
    assert argv_touches(["bash", "-lc", "cat a > b"], CWD) == ShellTouches(
        ("/proj/a",), ("/proj/b",)
    )
    # No shell: the words are literal, a $ included.
    assert argv_touches(["cat", "$x", "*.py"], CWD).reads == ("/proj/$x", "/proj/*.py")
    assert argv_touches([], CWD) == ShellTouches()


@pytest.mark.parametrize("cwd", ["", "relative/dir", "/pro\x00j"])
def test_without_a_usable_cwd_only_absolute_paths(cwd: str) -> None:
    assert reads("cat a /abs/b", cwd) == ("/abs/b",)


def test_cwd_is_normalised() -> None:
    assert reads("cat a", "/proj/sub/../x/") == ("/proj/x/a",)


# --- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat 'unbalanced", ShellTouches(("/proj/unbalanced",), ())),
        ('cat "unbalanced', ShellTouches(("/proj/unbalanced",), ())),
        ("cat $(unbalanced", ShellTouches()),
        ("cat ${unbalanced", ShellTouches()),
        ("cat `unbalanced", ShellTouches()),
        ("cat a\\", ShellTouches(("/proj/a",), ())),
        ("cat a\x00b c", ShellTouches(("/proj/c",), ())),
        ("\x00\x00\x00", ShellTouches()),
        ("", ShellTouches()),
        (";;;&&&|||((()))", ShellTouches()),
        (")))cat a", ShellTouches(("/proj/a",), ())),
        ("> ", ShellTouches()),
        ("cat <<", ShellTouches()),
        ("<<<<<<<<", ShellTouches()),
        ("cat $'\\", ShellTouches(("/proj/\\",), ())),
        ("cd", ShellTouches()),
        ("cp", ShellTouches()),
        ("sed -i", ShellTouches()),
        ("grep -e", ShellTouches()),
        ("timeout", ShellTouches()),
        ("env -C", ShellTouches()),
        ("bash -c", ShellTouches()),
        ("\udcff \ud800", ShellTouches()),
        ("cat \udcff", ShellTouches(("/proj/\udcff",), ())),
    ],
)
def test_hostile_input_never_raises(command: str, expected: ShellTouches) -> None:
    assert shell_touches(command, CWD) == expected


def test_a_megabyte_command() -> None:
    # One huge quoted word, one huge here-document and a very long list of words: all are read
    # to the end (the speed is measured by bench/shell_commands.py).
    big = "x" * 1_000_000
    assert reads(f"cat '{big}' last") == (f"/proj/{big}", "/proj/last")
    body = "\n".join(f"+line {i} don't" for i in range(60_000))
    patch = f"*** Begin Patch\n*** Add File: big.py\n{body}\n*** Update File: b.py\n*** End Patch"
    assert writes(f"apply_patch <<'EOF'\n{patch}\nEOF") == ("/proj/big.py", "/proj/b.py")
    many = "cat " + " ".join(f"f{i % 1000}" for i in range(200_000))
    assert len(reads(many)) == 1000
    assert reads("cat " + "$(" * 300_000) == ()
    # 500,000 empty quotes, then one left open: it holds the rest, as in the shell.
    assert reads("cat " + "'" * 1_000_001 + " a") == ("/proj/ a",)
    assert reads("bash -c " * 100_000 + "'cat a'") == ()


# --- hostile, model-steered commands: bounded work --------------------------------------------
# The model writes the command, so it can be built to make the reader slow, or to make it give up
# and lose a read. Work is asserted as Python's recursion limit and as traced memory, never time.

MIXED_WRAPPERS = "timeout -s KILL 5 sudo -u me -- env -u A -u B C=1 nice -n 5 stdbuf -oL command "


@contextlib.contextmanager
def stack_of(frames: int) -> Iterator[None]:
    """Python's recursion limit set to this many frames above the caller's."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def traced_peak(command: str) -> int:
    """The most memory reading ``command`` held at once, in bytes (the command itself aside)."""
    tracemalloc.start()
    try:
        shell_touches(command, CWD)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_fifty_thousand_nices_hide_no_read() -> None:
    # 250 KB; the reader used to copy the remaining words for each wrapper (770 MB) and hit the
    # recursion limit after about 1,000 of them, losing the read.
    assert reads("nice " * 50_000 + "cat pkg/x") == ("/proj/pkg/x",)


@pytest.mark.parametrize(
    "wrappers",
    [
        "nice " * 2_000,
        "env -u X " * 2_000,
        "timeout -s KILL 5 " * 2_000,
        "timeout --signal=KILL -k 1 5 " * 2_000,
        "sudo -u me -g staff -- " * 2_000,
        MIXED_WRAPPERS * 300,
        "env " + "-u X " * 20_000,
        "FOO=1 command exec -a name nohup time -p " * 1_000,
    ],
)
def test_thousands_of_wrappers_on_a_shallow_stack_keep_the_read(wrappers: str) -> None:
    with stack_of(40):
        assert shell_touches(wrappers + "cat pkg/x > out", CWD) == ShellTouches(
            ("/proj/pkg/x",), ("/proj/out",)
        )


def test_wrappers_in_nested_shells_on_a_shallow_stack() -> None:
    inner = "nice " * 2_000 + "cat pkg/x"
    command = "bash -c " + shlex.quote("sh -c " + shlex.quote("bash -lc " + shlex.quote(inner)))
    with stack_of(40):
        assert reads(command) == ("/proj/pkg/x",)


def test_each_env_chdir_applies_to_its_command_only() -> None:
    command = "env -C sub nice env -C deeper " * 100 + "cat x; cat y"
    assert reads(command) == ("/proj" + "/sub/deeper" * 100 + "/x", "/proj/y")


def test_command_v_after_wrappers_still_runs_nothing() -> None:
    assert reads("nice " * 2_000 + "command -v cat x; cat y") == ("/proj/y",)


@pytest.mark.parametrize(
    ("opening", "closing"),
    [('"$(', ')"'), ('"${', '}"'), ('<("$(', ')")'), ('"$(echo `x` ', ')"')],
)
def test_expansions_nested_in_double_quotes_keep_the_later_reads(
    opening: str, closing: str
) -> None:
    # Each level used to be a Python call (quotes, then the bracket, then quotes...): a few
    # thousand levels raised RecursionError and everything after was lost.
    command = "cat " + opening * 5_000 + closing * 5_000 + " pkg/x; cat pkg/y"
    with stack_of(40):
        assert reads(command) == ("/proj/pkg/x", "/proj/pkg/y")


@pytest.mark.parametrize(
    "attack",
    [
        lambda n: "nice " * n + "cat pkg/x",
        lambda n: MIXED_WRAPPERS * (n // 16) + "cat pkg/x",
        lambda n: 'cat "$(' * n + ')"' * n + " pkg/x",
        # A long directory copied into every later relative path: quadratic output before.
        lambda n: "cd " + "d" * (6 * n) + "; cat /pkg/x " + " ".join(f"f{i}" for i in range(n)),
    ],
    ids=["nice", "mixed wrappers", "nested quotes", "long cd"],
)
def test_memory_grows_linearly_with_the_attack(attack: Callable[[int], str]) -> None:
    # Sizes below the old recursion limit, where copying the words was quadratic: four times
    # the attack must hold about four times the memory, not sixteen.
    small, large = traced_peak(attack(200)), traced_peak(attack(800))
    assert shell_touches(attack(800), CWD).reads[:1] in (("/proj/pkg/x",), ("/pkg/x",))
    assert large <= 4.5 * small


def test_a_megabyte_of_repeated_flags_holds_no_entry_per_letter() -> None:
    command = "cat -" + "n" * 1_000_000 + " pkg/x"
    assert reads(command) == ("/proj/pkg/x",)
    assert traced_peak(command) < 3 * len(command)  # the word's own copy, not a tuple per letter


def test_a_cd_longer_than_path_max_knows_no_relative_path() -> None:
    # No file under it can be named by an absolute path; relative names are left out rather than
    # each becoming a copy of the directory.
    assert reads("cd " + "d" * 5_000 + " && cat x /abs/y") == ("/abs/y",)
    assert reads("cd " + "/d" * 2_100 + " && cat x") == ()
    near = "d/" * 2_000
    assert reads(f"cd {near} && cat x") == (os.path.join(CWD, near, "x"),)


def test_names_under_a_long_cd_are_bounded_in_total_and_the_cut_is_flagged() -> None:
    # Each relative name under a 4,000-character directory became a 4 KB path: a 1 MB command
    # used to hold 557 MB of them. What one command can name is bounded; the cut is flagged.
    near = "d/" * 2_000
    names = " ".join(f"f{i}" for i in range(20_000))
    touches = shell_touches(f"cd {near} && cat {names}", CWD)
    assert touches.cut
    assert sum(len(p) for p in touches.reads) <= shell_commands._MAX_TOUCH_CHARS
    assert touches.reads[0] == os.path.join(CWD, near, "f0")
    assert traced_peak(f"cd {near} && cat {names}") < 4 * shell_commands._MAX_TOUCH_CHARS
    assert not shell_touches("cat a b c", CWD).cut


@given(st.text(max_size=300))
def test_any_text_gives_absolute_normalised_paths(command: str) -> None:
    touches = shell_touches(command, CWD)
    for path in (*touches.reads, *touches.writes):
        assert path.startswith("/") and os.path.normpath(path) == path
        assert not path.startswith("//") and "\x00" not in path
    assert len(set(touches.reads)) == len(touches.reads)
    assert len(set(touches.writes)) == len(touches.writes)


@given(st.text(alphabet=st.sampled_from("ab '\"\\$`;&|<>()\n#*~=-"), max_size=200))
def test_any_shell_punctuation_is_survived(command: str) -> None:
    shell_touches(command, CWD)


SAFE_NAME = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", "..", "-") and not s.startswith("-"))


@given(st.lists(SAFE_NAME, min_size=1, max_size=6))
def test_quoted_names_come_back_as_shlex_split_gives_them(names: list[str]) -> None:
    # shlex is the reference for POSIX quoting; any name, quoted by shlex.quote, reads back.
    command = "cat -- " + " ".join(shlex.quote(n) for n in names)
    expected = [os.path.join(CWD, n) for n in shlex.split(command)[2:]]
    assert list(reads(command)) == list(dict.fromkeys(expected))


# --- what the real Codex CLI sends ------------------------------------------------------------

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks" / "codex"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("read", ShellTouches(("/r/repo/pkg/sub/x.py",), ())),
        ("shell", ShellTouches(("/r/repo/pkg/y.py",), ())),
        ("missing", ShellTouches(("/r/repo/pkg/absent.py",), ())),
        ("write", ShellTouches((), ("/r/repo/pkg/sub/new.py",))),  # apply_patch, the raw patch
        ("edit", ShellTouches((), ("/r/repo/pkg/sub/x.py",))),
    ],
)
def test_recorded_codex_commands(case: str, expected: ShellTouches) -> None:
    # Codex 0.171.0's PostToolUse: tool_input.command is the model's command line (``Bash``) or
    # the apply_patch tool's patch (``apply_patch``), never wrapped in bash -lc.
    for event in ("PreToolUse", "PostToolUse"):
        payload = json.loads((RECORDED / f"{event}-{case}.json").read_text())
        cwd = payload["cwd"].replace("$ROOT", "/r")
        assert shell_touches(payload["tool_input"]["command"], cwd) == expected

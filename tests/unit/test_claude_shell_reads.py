"""Which files Claude Code itself takes as read by a Bash command (hooks/claude_shell_reads.py):
its rule as its shipped code (2.1.332) has it, and nothing more."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_sidecar.hooks.claude_shell_reads import claude_reads


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/x.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    (tmp_path / "pkg/y.py").write_text("y = 2\n")
    (tmp_path / "pkg/blank_top.py").write_text("\n\n\nz = 3\n")
    (tmp_path / "empty.txt").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "cat pkg/x.py",
        "cat -n pkg/x.py",
        "nl pkg/x.py",
        "bat --plain pkg/x.py",
        "batcat -n pkg/x.py",
        "head pkg/x.py",
        "head -n 5 pkg/x.py",
        "head -n5 pkg/x.py",
        "head -3 pkg/x.py",
        "head --lines=2 pkg/x.py",
        "tail pkg/x.py",
        "tail -n 4 pkg/x.py",
        "sed -n 3,8p pkg/x.py",
        "sed -n 20p pkg/x.py",
        "sed --quiet 1,2p pkg/x.py",
        "echo start && cat pkg/x.py",
        "cat pkg/x.py; true",
        # Quotes every shell reads the same way: removed, separators inside them are text.
        "cat 'pkg/x.py'",
        'cat "pkg/x.py"',
        "cat pkg/'x'.py",
        "echo 'a; b && c' && cat pkg/x.py",
    ],
)
def test_a_command_that_prints_one_file_reads_it(repo: Path, command: str) -> None:
    assert claude_reads(command, str(repo)) == (str(repo / "pkg/x.py"),)


def test_several_reads_in_a_list_are_all_read(repo: Path) -> None:
    found = claude_reads("cat pkg/x.py && head -n 1 pkg/y.py", str(repo))
    assert found == (str(repo / "pkg/x.py"), str(repo / "pkg/y.py"))


def test_an_absolute_path_and_a_dotted_one_resolve(repo: Path) -> None:
    assert claude_reads(f"cat {repo}/pkg/../pkg/y.py", "/") == (str(repo / "pkg/y.py"),)


@pytest.mark.parametrize(
    "command",
    [
        "cat pkg/x.py | head",  # any pipe or redirection: nothing at all
        "cat pkg/x.py > out.txt",
        "cat < pkg/x.py",
        "cat pkg/x.py pkg/y.py",  # two operands
        "cat -A pkg/x.py",  # an option it does not know
        "cat -",
        "cd pkg && cat x.py",  # another command in the list
        "grep -n line pkg/x.py",  # a search counts only once it exited 0: not known here
        "rg line pkg/x.py",
        "grep -rn line pkg",
        "sed -i 1d pkg/x.py",
        "sed -n -e 1p pkg/x.py",
        "sed 1p pkg/x.py",  # not quiet
        "sed -n /line/p pkg/x.py",  # not a line range
        "sed -n 30,40p pkg/x.py",  # past the end: nothing printed
        "head -n 0 pkg/x.py",
        "head -n +3 pkg/x.py",
        "tail -f pkg/x.py",
        "head -n 2 pkg/blank_top.py",  # a blank slice of a file that is not blank
        "cat 'pkg/x.py",  # a quote left open
        'cat "$HOME/x.py"',  # an expansion inside double quotes
        'cat "pkg/x\\.py"',  # an escape
        "cat `echo pkg/x.py`",
        'cat pkg/x.py; echo "$x"',  # one part that is not read here: none of it counts
        "cat $HOME/x.py",
        "cat pkg/*.py",
        "cat pkg/missing.py",
        "cat pkg",  # a directory
        "ls pkg",
        "",
    ],
)
def test_anything_else_reads_nothing(repo: Path, command: str) -> None:
    assert claude_reads(command, str(repo)) == ()


def test_a_quoted_path_with_a_space_is_one_path(repo: Path) -> None:
    (repo / "pkg/with space.py").write_text("w = 1\n")
    assert claude_reads("cat 'pkg/with space.py'", str(repo)) == (str(repo / "pkg/with space.py"),)
    assert claude_reads("cat pkg/with space.py", str(repo)) == ()  # two operands


def test_an_empty_file_is_read(repo: Path) -> None:
    assert claude_reads("cat empty.txt", str(repo)) == (str(repo / "empty.txt"),)


def test_a_file_over_ten_mebibytes_is_not(repo: Path) -> None:
    big = repo / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(10 * 1024 * 1024 + 1)
    assert claude_reads("cat big.txt", str(repo)) == ()


# Claude Code's Bash results after the call (``tool_response``, as recorded from 2.1.332): exit 0,
# and exit 1 of a search, which it interprets; exit 2 and up fails the call (no PostToolUse).
MATCHED = {"stdout": "line 1", "stderr": "", "interrupted": False, "isImage": False}
NO_MATCH = {**MATCHED, "stdout": "", "returnCodeInterpretation": "No matches found"}


@pytest.mark.parametrize(
    "command",
    [
        "grep line pkg/x.py",
        "egrep line pkg/x.py",
        "fgrep line pkg/x.py",
        "grep -n line pkg/x.py",
        "grep -inH line pkg/x.py",
        "grep -A 2 -B3 --context=1 line pkg/x.py",
        "grep --fixed-strings --color=never line pkg/x.py",
        "grep - pkg/x.py",  # "-" is a pattern here
        "rg line pkg/x.py",
        "rg -S --pcre2 line pkg/x.py",
        "rg --context 2 -nN line pkg/x.py",
        # A pattern in quotes (a model usually writes one so): one word, however it is spelt.
        'grep -n "line 1" pkg/x.py',
        "grep 'a; b && c' pkg/x.py",
        'rg "def x" pkg/x.py',
        "grep '' pkg/x.py",
    ],
)
def test_a_search_of_one_file_that_exited_zero_reads_it(repo: Path, command: str) -> None:
    assert claude_reads(command, str(repo), MATCHED) == (str(repo / "pkg/x.py"),)


@pytest.mark.parametrize(
    ("command", "response"),
    [
        ("grep line pkg/x.py", NO_MATCH),  # exit 1
        ("grep line pkg/x.py", {}),  # not Claude Code's Bash result: not known to exit 0
        ("grep line pkg/x.py", {**MATCHED, "interrupted": True}),
        ("grep line pkg/x.py", {**MATCHED, "backgroundTaskId": "b1"}),
        ("grep -r line pkg/x.py", MATCHED),  # an option it does not list
        ("grep -c line pkg/x.py", MATCHED),
        ("grep -S line pkg/x.py", MATCHED),  # rg's flag, not grep's
        ("grep --context 2 line pkg/x.py", MATCHED),  # the spaced long form is rg's only
        ("grep -A x line pkg/x.py", MATCHED),
        ("grep -e line pkg/x.py", MATCHED),
        ("grep line pkg/x.py pkg/y.py", MATCHED),  # two files
        ("grep line pkg", MATCHED),  # a directory
        ("grep line -", MATCHED),
        ("grep line", MATCHED),
        ("rg -r x line pkg/x.py", MATCHED),
        ("rg --line-regexp=x line pkg/x.py", MATCHED),
        ("grep line pkg/x.py && echo found", MATCHED),  # not the only command
        ("echo start; grep line pkg/x.py", MATCHED),
        ("git grep line pkg/x.py", MATCHED),
        ('grep "a|b" pkg/x.py', MATCHED),  # a pipe anywhere, in quotes too: nothing at all
        ("grep 'line' pkg/x.py 'pkg/y.py'", MATCHED),  # two files, quoted or not
        ('grep "$pattern" pkg/x.py', MATCHED),
    ],
)
def test_any_other_search_reads_nothing(
    repo: Path, command: str, response: dict[str, object]
) -> None:
    assert claude_reads(command, str(repo), response) == ()


@pytest.mark.parametrize(
    "response",
    [
        {**MATCHED, "interrupted": True},
        {**MATCHED, "backgroundTaskId": "b1"},
        {**MATCHED, "isImage": True},
    ],
)
def test_no_read_counts_after_a_call_claude_code_does_not_check(
    repo: Path, response: dict[str, object]
) -> None:
    assert claude_reads("cat pkg/x.py", str(repo), response) == ()


def test_a_path_over_4096_characters_is_not_read(repo: Path) -> None:
    long = "./" * 2100 + "pkg/x.py"
    assert claude_reads(f"cat {long}", str(repo)) == ()
    assert claude_reads(f"cat {long[-4096:]}", str(repo)) == (str(repo / "pkg/x.py"),)

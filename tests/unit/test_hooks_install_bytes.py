"""``hooks install`` edits the user's file in its own layout, and ``hooks uninstall`` gives it back
byte for byte (hooks/json_text.py, settings_edit.py, install_record.py); a file whose values the
agents would not all read as written is refused unchanged (json_check.py)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from tests.support.property_budget import examples

from dsh_sidecar.cli import main
from dsh_sidecar.hooks.install import (
    HOOK_EVENTS,
    InstallError,
    hook_command,
    install,
    is_ours,
    status,
    uninstall,
    with_our_hooks,
    without_our_hooks,
)

Capture = pytest.CaptureFixture[bytes]
EXE = "/opt/dsh/bin/dsh-sidecar"
THEIRS = {"type": "command", "command": "~/bin/lint.sh"}
MINE = {
    "model": "opus",
    "env": {"NAME": "Ünïcødé ✓", "ESC": "tab\there"},
    "hooks": {
        "Stop": [{"hooks": [THEIRS]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}],
    },
    "n": [1.5, 10, 12345678901234567890, 1e-7],
}


def cmd(agent: str, exe: str = EXE) -> str:
    return hook_command(agent, exe)


LAYOUTS = {
    "two spaces": json.dumps(MINE, indent=2, ensure_ascii=False) + "\n",
    "four spaces": json.dumps(MINE, indent=4, ensure_ascii=False) + "\n",
    "tabs": json.dumps(MINE, indent="\t", ensure_ascii=False) + "\n",
    "compact": json.dumps(MINE, separators=(",", ":"), ensure_ascii=False),
    "one line": json.dumps(MINE, ensure_ascii=False) + "\n",
    "crlf": (json.dumps(MINE, indent=2, ensure_ascii=False) + "\n").replace("\n", "\r\n"),
    "no final newline": json.dumps(MINE, indent=2, ensure_ascii=False),
    "ascii escapes": json.dumps(MINE, indent=2) + "\n",
    "no hooks": json.dumps({"model": "opus"}, indent=2) + "\n",
    "empty hooks": '{\n  "hooks": {}\n}\n',
    "empty object": "{}",
    "spacy": '{ "a" : 1 ,\n\n   "hooks" : { "Stop" : [ ] } }\n',
    "number spellings": '{"a": 1E5, "b": -0.0, "c": 1.000000000000000000001, "d": 2e-400}',
    "bom": '\ufeff{\n  "a": 1\n}\n',
}


@pytest.fixture(params=sorted(LAYOUTS))
def original(request: pytest.FixtureRequest) -> bytes:
    return LAYOUTS[request.param].encode("utf-8")


def lines_kept(before: str, after: str) -> bool:
    """Every line of ``before`` but its last two (where the new entries go) is in ``after``."""
    return all(line in after.splitlines() for line in before.splitlines()[:-2])


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_install_then_uninstall_gives_the_bytes_back(
    tmp_path: Path, original: bytes, agent: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(original)
    records = str(tmp_path / "records")
    assert install(agent, str(path), cmd(agent), records=records).changed
    assert status(agent, str(path)).installed
    installed = path.read_bytes()
    assert not install(agent, str(path), cmd(agent), records=records).changed
    assert path.read_bytes() == installed
    assert uninstall(agent, str(path), records=records).changed
    assert path.read_bytes() == original


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_without_a_record_uninstall_takes_out_only_ours(
    tmp_path: Path, original: bytes, agent: str
) -> None:
    """The textual edit alone (no record: the file was installed elsewhere, or changed since) is
    also the exact inverse of install's."""
    path = tmp_path / "settings.json"
    path.write_bytes(original)
    install(agent, str(path), cmd(agent))
    assert uninstall(agent, str(path)).changed
    expected = original
    if original.strip() in (b"{}", b'{\n  "hooks": {}\n}'):
        # A "hooks" object we emptied goes; an empty object keeps its one-line spelling.
        expected = b"{}" + (b"\n" if original.endswith(b"\n") else b"")
    assert path.read_bytes() == expected


def test_install_keeps_the_files_layout(tmp_path: Path) -> None:
    for name, text in LAYOUTS.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8", newline="")
        install("claude", str(path), cmd("claude"))
        after = path.read_bytes().decode("utf-8")
        assert json.loads(after.lstrip("\ufeff"))["hooks"]["SessionStart"], name
        assert ("\r\n" in after) == ("\r\n" in text), name
        assert ("\n" in after) == ("\n" in text or text.strip() == "{}"), name
        assert after.endswith("\n") == text.endswith("\n"), name
        assert after.startswith("\ufeff") == text.startswith("\ufeff"), name
        assert lines_kept(text, after), name
    two = (tmp_path / "two spaces.json").read_text()
    assert '\n    "SessionStart": [\n      {\n        "hooks": [\n' in two
    tabs = (tmp_path / "tabs.json").read_text()
    assert '\n\t\t"SessionStart": [\n\t\t\t{\n\t\t\t\t"hooks": [\n' in tabs
    four = (tmp_path / "four spaces.json").read_text()
    assert '\n        "SessionStart": [\n            {\n' in four
    compact = (tmp_path / "compact.json").read_text()
    assert (
        '"~/bin/lint.sh"}]},{"matcher":"Bash|Edit|Glob|Grep|MultiEdit|NotebookEdit|Read|Write",'
        '"hooks":[' in compact
    )
    assert ',"timeout":5}]}],"SessionStart":[{"hooks":[{"type":"command","command":"/opt' in compact
    assert compact.endswith(',"n":[1.5,10,12345678901234567890,1e-07]}')
    assert ", " not in compact and ": " not in compact
    one_line = (tmp_path / "one line.json").read_text()
    assert (
        '"~/bin/lint.sh"}]}, {"matcher": "Bash|Edit|Glob|Grep|MultiEdit|NotebookEdit|Read|Write", '
        in one_line
    )
    numbers = (tmp_path / "number spellings.json").read_text()
    assert numbers.startswith('{"a": 1E5, "b": -0.0, "c": 1.000000000000000000001, "d": 2e-400, ')


def test_a_second_install_after_a_new_path_still_uninstalls_to_the_original(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    original = LAYOUTS["four spaces"].encode()
    path.write_bytes(original)
    records = str(tmp_path / "records")
    install("claude", str(path), cmd("claude", "/old/dsh-sidecar"), records=records)
    assert install("claude", str(path), cmd("claude", "/new/dsh-sidecar"), records=records).changed
    assert "/old/" not in path.read_text()
    uninstall("claude", str(path), records=records)
    assert path.read_bytes() == original


def test_an_entry_from_before_the_record_is_removed_too(tmp_path: Path) -> None:
    """A file that held our entry from an older install: uninstall removes ours, it does not
    bring the old one back."""
    path = tmp_path / "settings.json"
    install("claude", str(path), cmd("claude", "/old/dsh-sidecar"))  # no record kept
    path.write_bytes(path.read_bytes().replace(b"{\n  ", b'{\n  "model": "opus",\n  ', 1))
    records = str(tmp_path / "records")
    install("claude", str(path), cmd("claude"), records=records)
    uninstall("claude", str(path), records=records)
    assert path.read_bytes() == b'{\n  "model": "opus"\n}\n'
    assert status("claude", str(path)).state == "not installed"


def test_a_file_changed_since_install_keeps_the_change(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(LAYOUTS["tabs"].encode())
    records = str(tmp_path / "records")
    install("claude", str(path), cmd("claude"), records=records)
    edited = path.read_text().replace('"model": "opus"', '"model": "sonnet"')
    path.write_text(edited)
    uninstall("claude", str(path), records=records)
    assert path.read_text() == LAYOUTS["tabs"].replace('"model": "opus"', '"model": "sonnet"')
    assert os.listdir(records) == []  # the record went with the hooks


def test_a_file_install_created_is_removed_with_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "p" / ".gemini" / "settings.json"
    (tmp_path / "p").mkdir()
    records = str(tmp_path / "records")
    install("gemini", str(path), cmd("gemini"), records=records)
    assert path.is_file()
    outcome = uninstall("gemini", str(path), records=records)
    assert outcome.deleted == (str(path), str(path.parent))
    assert os.listdir(tmp_path / "p") == []


def test_a_created_directory_with_something_else_in_it_stays(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    records = str(tmp_path / "records")
    install("claude", str(path), cmd("claude"), records=records)
    (path.parent / "settings.local.json").write_text("{}")
    assert uninstall("claude", str(path), records=records).deleted == (str(path),)
    assert os.listdir(path.parent) == ["settings.local.json"]


def test_a_created_file_changed_since_is_kept(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    records = str(tmp_path / "records")
    install("claude", str(path), cmd("claude"), records=records)
    document = json.loads(path.read_text())
    path.write_text(json.dumps({"model": "opus", **document}, indent=2) + "\n")
    outcome = uninstall("claude", str(path), records=records)
    assert outcome.changed and not outcome.deleted
    assert path.read_text() == '{\n  "model": "opus"\n}\n'


# --- files install cannot write back faithfully -----------------------------------------------

AMBIGUOUS = {
    b'{"limit": 1e400}': ":1:11: the number 1e400 is beyond the range of a JSON number",
    b'{"limit": -1E+999}': ":1:11: the number -1E+999 is beyond the range",
    b'{"big": 1' + b"0" * 400 + b"}": ":1:9: the number 10000000000000000000… is beyond",
    b'{\n  "s": "\\ud800"\n}': ':2:8: a string with half a surrogate pair ("\\ud800")',
    b'{"s": "a\\udfffb"}': ":1:7: a string with half a surrogate pair",
    b'{"a": 1, "a": 2}': ':1:10: the key "a" appears twice',
    b'{"hooks": {}, "x": {"hooks": 1}, "hooks": {}}': ':1:34: the key "hooks" appears twice',
    b'{"x": [{"k": 1, "k": 1}]}': ':1:17: the key "k" appears twice',
    b'{"a": NaN}': ":1:7: NaN is not JSON",
    b'{"a": [Infinity]}': ":1:8: Infinity is not JSON",
    b'{"a": -Infinity}': ":1:7: -Infinity is not JSON",
    b'{"a": ' + b"9" * 5000 + b"}": ": not readable as JSON",
}


@pytest.mark.parametrize("content", sorted(AMBIGUOUS))
def test_a_file_the_agents_would_read_differently_is_refused_unchanged(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    for operation in ("install", "uninstall"):
        with pytest.raises(InstallError) as raised:
            if operation == "install":
                install("claude", str(path), cmd("claude"), records=str(tmp_path / "r"))
            else:
                uninstall("claude", str(path), records=str(tmp_path / "r"))
        message = str(raised.value)
        assert message.startswith(str(path) + AMBIGUOUS[content][:1]), message
        assert AMBIGUOUS[content] in message and message.endswith("; left unchanged"), message
        assert path.read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]  # no record, no temporary


def test_a_refused_write_leaves_no_record(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"{}")
    path.chmod(0o444)
    with pytest.raises(InstallError, match="read-only; left unchanged"):
        install("claude", str(path), cmd("claude"), records=str(tmp_path / "records"))
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_the_same_key_in_different_objects_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": {"k": 1}, "b": {"k": 1}, "k": ["k", "k"]}')
    assert install("claude", str(path), cmd("claude")).changed


# --- the command line -------------------------------------------------------------------------


def run(capsysbinary: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "p" / ".git").mkdir(parents=True)
    return tmp_path / "p"


def test_cli_round_trip_and_nothing_to_remove(project: Path, capsysbinary: Capture) -> None:
    # The shared file (--shared): the one a team commits, so the one whose bytes matter most.
    settings = project / ".claude" / "settings.json"
    given = f"removing from the project at {project} (given with --project)\n"
    code, out, err = run(
        capsysbinary,
        "hooks",
        "uninstall",
        "--agent",
        "claude",
        "--shared",
        "--project",
        str(project),
    )
    assert (code, err) == (0, "")
    assert out == given + f"Claude Code: nothing to remove: no dsh-sidecar hooks in {settings}\n"
    assert not settings.parent.exists()
    original = b'{\r\n\t"model": "opus"\r\n}'
    settings.parent.mkdir()
    settings.write_bytes(original)
    assert (
        run(
            capsysbinary,
            "hooks",
            "install",
            "--agent",
            "claude",
            "--shared",
            "--project",
            str(project),
        )[0]
        == 0
    )
    assert os.listdir(project.parent / "dsh" / "hooks" / "installed")  # the user's state
    assert sorted(os.listdir(project / ".claude")) == ["settings.json"]  # nothing of ours here
    code, out, err = run(
        capsysbinary,
        "hooks",
        "uninstall",
        "--agent",
        "claude",
        "--shared",
        "--project",
        str(project),
    )
    assert (code, out, err) == (
        0,
        given + f"Claude Code: dsh-sidecar hooks removed from {settings}\n",
        "",
    )
    assert settings.read_bytes() == original
    code, out, _ = run(
        capsysbinary,
        "hooks",
        "uninstall",
        "--agent",
        "claude",
        "--shared",
        "--project",
        str(project),
    )
    assert out.startswith(given + "Claude Code: nothing to remove")


def test_cli_uninstall_deletes_what_install_created(project: Path, capsysbinary: Capture) -> None:
    assert run(capsysbinary, "hooks", "install", "--agent", "codex", "--root", str(project))[0] == 0
    code, out, _ = run(
        capsysbinary, "hooks", "uninstall", "--agent", "codex", "--root", str(project)
    )
    assert code == 0
    assert out == (
        f"removing from the project at {project} (given with --project)\n"
        f"Codex CLI: dsh-sidecar hooks removed; deleted {project}/.codex/hooks.json and"
        f" {project}/.codex, created by install\n"
    )
    assert sorted(os.listdir(project)) == [".git"]


def test_cli_refuses_an_ambiguous_file(project: Path, capsysbinary: Capture) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{"limit": 1e400}')
    code, out, err = run(
        capsysbinary, "hooks", "install", "--agent", "gemini", "--root", str(project)
    )
    assert (code, out) == (2, "")
    assert err == (
        f"dsh-sidecar: {settings}:1:11: the number 1e400 is beyond the range of a JSON number"
        " (an agent would read Infinity or refuse the file); left unchanged\n"
    )
    assert settings.read_bytes() == b'{"limit": 1e400}'
    settings.write_bytes(b'{"s": "\\ud800"}')
    code, out, err = run(
        capsysbinary, "hooks", "install", "--agent", "gemini", "--root", str(project)
    )
    assert (code, out) == (2, "") and "half a surrogate pair" in err and "Traceback" not in err
    assert settings.read_bytes() == b'{"s": "\\ud800"}'


# --- any document, any layout ---------------------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
HANDLERS = st.sampled_from(
    [THEIRS, {"type": "command", "command": "/old/bin/dsh-sidecar hook --agent claude"}, {"x": 1}]
)
GROUPS = st.fixed_dictionaries(
    {"hooks": st.lists(HANDLERS, max_size=3)}, optional={"matcher": st.sampled_from(["Read", "*"])}
)
EVENTS = st.sampled_from(["SessionStart", "PostToolUse", "Stop", "Notification"])
HOOK_TABLES = st.dictionaries(EVENTS, st.lists(GROUPS, max_size=3), max_size=4)
DOCUMENTS = st.dictionaries(st.text(max_size=6).filter(lambda k: k != "hooks"), VALUES, max_size=4)


@st.composite
def settings_files(draw: st.DrawFn) -> bytes:
    document = draw(DOCUMENTS)
    if draw(st.booleans()):
        items = list(document.items())
        items.insert(draw(st.integers(0, len(items))), ("hooks", draw(HOOK_TABLES)))
        document = dict(items)
    indent = draw(st.sampled_from([None, 0, 1, 2, 4, "\t"]))
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    text = json.dumps(
        document, indent=indent, separators=separators, ensure_ascii=draw(st.booleans())
    )
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return (text + draw(st.sampled_from(["", "\n", "\r\n", "  \n"]))).encode("utf-8")


@hsettings(max_examples=examples(300), deadline=None)
@given(original=settings_files(), agent=st.sampled_from(["claude", "gemini"]))
def test_any_file_in_any_layout_round_trips(original: bytes, agent: str) -> None:
    document = json.loads(original)
    hooks = document.get("hooks") or {}
    ours_before = any(
        is_ours(handler, agent)
        for groups in hooks.values()
        for group in groups
        for handler in group["hooks"]
    )
    # An empty list (or "hooks" object) our entries went into comes out emptied by us, and
    # goes: only the record knows it was there.
    filled = document.get("hooks") == {} or any(
        hooks[e.event] == [] for e in HOOK_EVENTS[agent] if e.event in hooks
    )
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "settings.json"
        path.write_bytes(original)
        records = str(Path(scratch) / "records")
        install(agent, str(path), cmd(agent), records=records)
        assert status(agent, str(path)).installed
        assert not install(agent, str(path), cmd(agent), records=records).changed
        uninstall(agent, str(path), records=records)
        if not ours_before:
            assert path.read_bytes() == original
        else:  # an older entry of ours is not brought back
            assert status(agent, str(path)).state == "not installed"
            assert json.loads(path.read_bytes()) == without_our_hooks(document, agent, str(path))
        # Without the record, only our entries come out of the text.
        path.write_bytes(original)
        install(agent, str(path), cmd(agent))
        uninstall(agent, str(path))
        if not filled and not ours_before:
            assert path.read_bytes() == original
        expected = without_our_hooks(
            with_our_hooks(document, agent, cmd(agent), str(path)), agent, str(path)
        )
        assert json.loads(path.read_bytes()) == expected

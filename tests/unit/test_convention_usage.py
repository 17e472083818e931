"""Conventions used while off (doctor, hover, diagnostics name the setting), and hostile trees
for the conventions: runaway rule folders, symlink loops, FIFOs, fan-out imports, long names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.instrkit import instructions, load, write_tree

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LOCAL_FS
from dsh_sidecar.sources.agent_instructions.confinement import confinement_once
from dsh_sidecar.sources.agent_instructions.rules import MAX_RULE_FILES, RuleIndex
from dsh_sidecar.sources.agent_instructions.usage import (
    document_conventions,
    project_conventions,
)

TREE = {
    "p/.git/": "",
    "p/CLAUDE.md": "See @docs/a.md and @nobody.\n",
    "p/docs/a.md": "a\n",
    "p/pkg/AGENTS.override.md": "override\n",
    "p/.github/copilot-instructions.md": "wide\n",
    "p/.claude/rules/x.md": "x\n",
    "home/.claude/CLAUDE.md": "mine\n",
}


def conventions(
    root: Path, directory: Path, home: Path, settings: InstructionSettings
) -> list[str]:
    found = project_conventions(
        str(directory),
        str(root),
        settings,
        LOCAL_FS,
        str(home),
        confinement_once(str(root), settings, LOCAL_FS, str(home)),
    )
    return [c.describe() for c in found]


def test_a_project_using_conventions_that_are_off(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    root, home = tmp_path / "p", tmp_path / "home"
    assert conventions(root, root / "pkg", home, InstructionSettings()) == [
        "Codex's convention AGENTS.override.md replaces its directory's AGENTS.md "
        "(pkg/AGENTS.override.md): set instructions.overrideFiles to true to read it",
        "Claude Code's convention @path imports another file (CLAUDE.md): set "
        "instructions.imports to true to read it",
        "GitHub Copilot's convention .github/copilot-instructions.md holds repository-wide "
        'instructions (.github/copilot-instructions.md): add "copilot" to instructions.ruleSets '
        "to read it",
        "Claude Code's convention .claude/rules holds rules for the files they name "
        '(.claude/rules/x.md): add "claude" to instructions.ruleSets to read it',
        "Claude Code's convention keeps user-global instructions in your home directory "
        "(~/.claude/CLAUDE.md): add ~/.claude/CLAUDE.md to instructions.userGlobalFiles to read it",
    ]
    # From the root, the override below is not on the way.
    assert not any("override" in c for c in conventions(root, root, home, InstructionSettings()))


def test_nothing_is_reported_once_the_settings_are_on(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    root, home = tmp_path / "p", tmp_path / "home"
    on = instructions(
        overrideFiles=True,
        imports=True,
        ruleSets=["copilot", "claude"],
        userGlobalFiles=["~/.claude/CLAUDE.md"],
    )
    assert conventions(root, root / "pkg", home, on) == []


def test_a_document_names_what_it_uses(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    root, home = str(tmp_path / "p"), str(tmp_path / "home")
    off = InstructionSettings()
    assert [
        c.setting
        for c in document_conventions(f"{root}/pkg/AGENTS.override.md", root, off, LOCAL_FS, home)
    ] == ["instructions.overrideFiles"]
    claude = document_conventions(
        f"{root}/CLAUDE.md", root, off, LOCAL_FS, home, (tmp_path / "p/CLAUDE.md").read_text()
    )
    assert [(c.setting, c.paths) for c in claude] == [("instructions.imports", ("docs/a.md",))]
    rule = document_conventions(f"{root}/.claude/rules/x.md", root, off, LOCAL_FS, home)
    assert [c.enable for c in rule] == ['add "claude" to instructions.ruleSets']


def test_copilots_repository_wide_file_is_not_called_a_rule_for_some_files(
    tmp_path: Path,
) -> None:
    # .github/copilot-instructions.md applies to every file; the .instructions.md files of
    # .github/instructions apply to the files their applyTo names.
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/.github/copilot-instructions.md": "wide\n",
            "p/.github/instructions/py.instructions.md": "---\napplyTo: '**/*.py'\n---\npy\n",
        },
    )
    root, home = tmp_path / "p", tmp_path / "home"
    assert conventions(root, root, home, InstructionSettings()) == [
        "GitHub Copilot's convention .github/instructions holds rules for the files they name, "
        "and .github/copilot-instructions.md holds repository-wide instructions "
        "(.github/copilot-instructions.md, .github/instructions/py.instructions.md): "
        'add "copilot" to instructions.ruleSets to read it'
    ]
    off = InstructionSettings()
    effects = [
        [c.effect for c in document_conventions(str(root / rel), str(root), off, LOCAL_FS, "")]
        for rel in (".github/copilot-instructions.md", ".github/instructions/py.instructions.md")
    ]
    assert effects == [
        [".github/copilot-instructions.md holds repository-wide instructions"],
        [".github/instructions holds rules for the files they name"],
    ]


def cli(tmp_path: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real ``dsh-sidecar`` with a home and DSH_HOME of the test's own."""
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    env.update(HOME=str(tmp_path / "home"), DSH_HOME=str(tmp_path / "dsh"))
    return subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_doctor_run_in_a_project_lists_them_and_stays_ok(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    done = cli(tmp_path, tmp_path / "p" / "pkg", "doctor")
    # Another agent's convention is information about the repository, not a fault of the
    # installation: listed, and the status stays ok (exit 0).
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    rows = [line for line in lines if line.startswith("convention ")]
    assert rows[0] == (
        "convention   off, but used here: Codex's convention AGENTS.override.md replaces its "
        "directory's AGENTS.md (pkg/AGENTS.override.md): set instructions.overrideFiles to true "
        "to read it"
    )
    assert len(rows) == 5
    assert lines[-1] == "status       ok"


def test_an_import_of_the_chains_own_file_is_not_flagged(tmp_path: Path) -> None:
    # CLAUDE.md importing its sibling AGENTS.md is Claude Code's usual way to share one file:
    # the sidecar loads AGENTS.md as itself, as preview and scopes show.
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "agents\n",
            "p/CLAUDE.md": "Claude: @AGENTS.md\n",
            "p/pkg/AGENTS.md": "pkg\n",
            "p/pkg/CLAUDE.md": "@../AGENTS.md @AGENTS.md @./CLAUDE.md\n",
            "p/pkg/x.py": "",
        },
    )
    pkg = tmp_path / "p" / "pkg"
    for argv in (["preview"], ["scopes", "x.py"]):
        done = cli(tmp_path, pkg, *argv)
        assert (done.returncode, done.stderr) == (0, ""), argv
    done = cli(tmp_path, pkg, "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("convention ")] == []
    assert lines[-1] == "status       ok"


def test_an_import_of_any_other_file_is_flagged(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "p/.git/": "",
            "p/AGENTS.md": "agents\n",
            # pkg/AGENTS.md is below CLAUDE.md's directory: not a file of its chain.
            "p/CLAUDE.md": "@AGENTS.md @pkg/AGENTS.md\n",
            "p/pkg/AGENTS.md": "pkg\n",
            "p/pkg/CLAUDE.md": "@AGENTS.md @../docs/a.md\n",
            "p/docs/a.md": "a\n",
        },
    )
    done = cli(tmp_path, tmp_path / "p" / "pkg", "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("convention ")] == [
        "convention   off, but used here: Claude Code's convention @path imports another file "
        "(CLAUDE.md, pkg/CLAUDE.md): set instructions.imports to true to read it"
    ]
    assert lines[-1] == "status       ok"


# --- hostile trees ------------------------------------------------------------------------------


def test_a_runaway_rule_folder_is_listed_up_to_its_cap(tmp_path: Path) -> None:
    folder = tmp_path / "p" / ".claude" / "rules"
    folder.mkdir(parents=True)
    for n in range(MAX_RULE_FILES + 100):
        (folder / f"r{n:04}.md").write_text("---\npaths: x/**\n---\nr\n")
    index = RuleIndex(str(tmp_path / "p"), ("claude",), LOCAL_FS, lambda probe: ("", None, None))
    assert len(index.rules()) == MAX_RULE_FILES


def test_symlink_loops_fifos_and_deep_folders_are_not_followed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"p/.git/": "", "p/.claude/rules/ok.md": "ok\n"})
    rules = tmp_path / "p" / ".claude" / "rules"
    (rules / "loop").symlink_to(rules)  # a directory link back up
    (rules / "elsewhere").symlink_to("/etc")
    os.mkfifo(rules / "fifo.md")
    deep = rules
    for n in range(20):
        deep = deep / f"d{n}"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("too deep\n")
    result = load(tmp_path / "p", tmp_path / "home", instructions(ruleSets=["claude"]))
    assert [e.candidate.display_path for e in result.entries] == [".claude/rules/ok.md"]


def test_fan_out_imports_stop_at_the_file_cap(tmp_path: Path) -> None:
    files = {"p/.git/": "", "p/AGENTS.md": " ".join(f"@f{n}.md" for n in range(100)) + "\n"}
    for n in range(100):
        files[f"p/f{n}.md"] = f"file {n}\n"
    write_tree(tmp_path, files)
    result = load(tmp_path / "p", tmp_path / "home", instructions(imports=True))
    records = result.entries[0].imports
    # The syntax reads at most 64 distinct paths of one file; all of those import.
    assert sum(r.state == "imported" for r in records) == 64
    assert "file 63\n" in result.text and "file 64\n" not in result.text


def test_an_unreasonable_import_path_is_reported_not_raised(tmp_path: Path) -> None:
    long = "x/" * 3000 + "a.md"
    write_tree(tmp_path, {"p/.git/": "", "p/AGENTS.md": f"@{long} @ok.md\n", "p/ok.md": "ok\n"})
    result = load(tmp_path / "p", tmp_path / "home", instructions(imports=True))
    assert [r.state for r in result.entries[0].imports] == ["unreadable", "imported"]


def test_frontmatter_that_never_closes_is_bounded(tmp_path: Path) -> None:
    text = "---\n" + "k: v\n" * 5000 + "---\nbody\n"
    write_tree(tmp_path, {"p/.git/": "", "p/.claude/rules/x.md": text})
    result = load(tmp_path / "p", tmp_path / "home", instructions(ruleSets=["claude"]))
    (entry,) = result.entries
    assert entry.applies is not None and entry.applies.mode == "always"
    assert entry.applies.problems[0].message.startswith("the frontmatter block is never closed")


def test_a_repository_of_gemini_md_and_dot_claude_claude_md_gets_no_silent_empty_baseline(
    tmp_path: Path,
) -> None:
    write_tree(
        tmp_path,
        {"p/.git/": "", "p/GEMINI.md": "gemini\n", "p/.claude/CLAUDE.md": "claude\n"},
    )
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    env.update(HOME=str(tmp_path / "home"), DSH_HOME=str(tmp_path / "dsh"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dsh_sidecar", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path / "p",
            check=False,
        )

    preview = run("preview")
    assert preview.stdout == ""
    assert (
        "dsh-sidecar: not read: Gemini CLI's convention GEMINI.md holds a directory's "
        'instructions (GEMINI.md): add "GEMINI.md" to instructions.instructionFileCandidates '
        "to read it"
    ) in preview.stderr.splitlines()
    assert "link or move it to CLAUDE.md" in preview.stderr
    scopes = run("scopes", ".")
    assert "instructions.instructionFileCandidates" in scopes.stderr
    doctor = run("doctor")
    # Named on its convention lines; the installation itself is healthy.
    assert doctor.returncode == 0
    lines = doctor.stdout.splitlines()
    assert [line.partition("): ")[0] + ")" for line in lines if line.startswith("convention ")] == [
        "convention   off, but used here: Gemini CLI's convention GEMINI.md holds a directory's "
        "instructions (GEMINI.md)",
        "convention   off, but used here: Claude Code's convention .claude/CLAUDE.md holds a "
        "directory's instructions (.claude/CLAUDE.md)",
    ]
    assert lines[-1] == "status       ok"

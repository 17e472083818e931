"""Record the real CLIs' hook payloads into tests/fixtures/agent_hooks/.

    .venv/bin/python -m tests.support.record_hooks [--agent claude|codex|gemini] [--out DIR]

Each scenario runs one CLI headless against the fake model with the capture hook
(tests/support/capture_hook.py) on every event it knows, then saves each payload as
``<agent>/<event>-<case>.json`` (the first payload of that event in that scenario; later ones
of the same event get ``-2``, ``-3``...). Paths under the run's temp directory become
``$ROOT`` (the project is ``$ROOT/repo``, the throwaway home ``$ROOT/home``); everything else is
kept exactly as the CLI sent it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.agent_cli import AGENTS, VERSIONS, Agent, run_agent
from tests.support.hooks import capture_all, captured
from tests.support.recorded import RecordedRequest, parts_of
from tests.support.steps import (
    EditFile,
    Policy,
    ReadFile,
    Shell,
    Step,
    Text,
    ToolCall,
    WriteFile,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_hooks"
PLACEHOLDER = "$ROOT"


@dataclass(frozen=True)
class Scenario:
    case: str
    prompt: str
    steps: Callable[[Path], list[Step] | Policy]  # given the project root
    # Resume: one plain turn first, in the same home; only the resumed run is recorded.
    resume: bool = False


def make_project(repo: Path) -> None:
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Root instructions.\n")
    (repo / "AGENTS.md").write_text("Root agents file.\n")
    (repo / "GEMINI.md").write_text("Root gemini file.\n")
    (repo / "pkg" / "sub" / "CLAUDE.md").write_text("Nested instructions.\n")
    (repo / "pkg" / "sub" / "AGENTS.md").write_text("Nested agents file.\n")
    (repo / "pkg" / "sub" / "GEMINI.md").write_text("Nested gemini file.\n")
    (repo / "pkg" / "sub" / "x.py").write_text("VALUE = 1\n")
    (repo / "pkg" / "y.py").write_text("OTHER = 2\n")


def _path(agent: Agent, repo: Path, relative: str) -> str:
    # Claude Code's file tools take absolute paths; the others get what a model usually writes.
    return str(repo / relative) if agent == "claude" else relative


def scenarios(agent: Agent) -> list[Scenario]:
    def read(repo: Path) -> list[Step]:
        return [ReadFile(_path(agent, repo, "pkg/sub/x.py")), Text("Read it.")]

    def write(repo: Path) -> list[Step]:
        return [WriteFile(_path(agent, repo, "pkg/sub/new.py"), "NEW = 3\n"), Text("Wrote it.")]

    def edit(repo: Path) -> list[Step]:
        return [EditFile(_path(agent, repo, "pkg/sub/x.py"), "VALUE = 1", "VALUE = 2"), Text("ok")]

    def shell(repo: Path) -> list[Step]:
        return [Shell("cat pkg/y.py"), Text("Ran it.")]

    def missing(repo: Path) -> list[Step]:
        return [ReadFile(_path(agent, repo, "pkg/absent.py")), Text("Not there.")]

    found: list[Scenario] = [
        Scenario("read", "Read pkg/sub/x.py.", read),
        Scenario("write", "Create pkg/sub/new.py.", write),
        Scenario("edit", "Set VALUE to 2 in pkg/sub/x.py.", edit),
        Scenario("shell", "Show pkg/y.py with cat.", shell),
        Scenario("missing", "Read pkg/absent.py.", missing),
        Scenario("resume", "Read pkg/sub/x.py again.", read, resume=True),
    ]
    if agent == "claude":
        found += [
            Scenario("subagent", SUBAGENT_PROMPT, lambda repo: _subagent(repo, background=False)),
            Scenario(
                "subagent-background",
                SUBAGENT_PROMPT,
                lambda repo: _subagent(repo, background=True),
            ),
        ]
    return found


SUBAGENT_PROMPT = "Ask a subagent to read pkg/sub/x.py."
SUBAGENT_TASK = "Read pkg/sub/x.py and report VALUE."


def _subagent(repo: Path, *, background: bool) -> Policy:
    """Claude Code's Agent tool: the subagent reads a file, then both answer. A policy, not a
    list, because a background subagent and its parent ask the model concurrently."""
    task = {
        "description": "Read a file",
        "prompt": SUBAGENT_TASK,
        "subagent_type": "general-purpose",
        "run_in_background": background,
    }

    def step(request: RecordedRequest) -> Step:
        parts = parts_of(request)
        in_subagent = not any(SUBAGENT_PROMPT in p.text for p in parts)
        has_result = any(p.kind == "tool_result" for p in parts)
        if in_subagent:
            return Text("VALUE is 1.") if has_result else ReadFile(str(repo / "pkg/sub/x.py"))
        return Text("The subagent says VALUE is 1.") if has_result else ToolCall("Agent", task)

    return step


def sanitize(value: Any, root: Path) -> Any:
    replacements = []
    for form in {str(root), str(root.resolve())}:
        replacements += [(form, PLACEHOLDER), (form.replace("/", "-"), "-$ROOT")]
    text = json.dumps(value)
    for old, new in replacements:
        text = text.replace(json.dumps(old)[1:-1], new)
    return json.loads(text)


def record(agent: Agent, scenario: Scenario, out: Path) -> list[str]:
    root = Path(tempfile.mkdtemp(prefix="dsh-hooks-"))
    try:
        repo, home, captures = root / "repo", root / "home", root / "captures"
        make_project(repo)
        if scenario.resume:
            first = run_agent(
                agent,
                repo,
                "Say hello.",
                [Text("Hello.")],
                home=home,
                hooks=capture_all(agent, root / "first-run"),
            )
            if first.exit_code != 0:
                raise SystemExit(
                    f"{agent} {scenario.case}: the first run failed\n{first.describe()}"
                )
        run = run_agent(
            agent,
            repo,
            scenario.prompt,
            scenario.steps(repo),
            home=home,
            hooks=capture_all(agent, captures),
            resume=scenario.resume,
            timeout=180,
        )
        if run.exit_code != 0:
            raise SystemExit(f"{agent} {scenario.case}: the CLI failed\n{run.describe()}")
        written = []
        seen: dict[str, int] = {}
        for event, payload in captured(captures):
            seen[event] = seen.get(event, 0) + 1
            suffix = "" if seen[event] == 1 else f"-{seen[event]}"
            path = out / agent / f"{event}-{scenario.case}{suffix}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(sanitize(payload, root), indent=2, sort_keys=True) + "\n")
            written.append(path.name)
        return written
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", choices=AGENTS, action="append")
    parser.add_argument("--case", action="append")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    args = parser.parse_args()
    for agent in args.agent or AGENTS:
        for scenario in scenarios(agent):
            if args.case and scenario.case not in args.case:
                continue
            names = record(agent, scenario, args.out)
            print(f"{agent} {VERSIONS[agent]} {scenario.case}: {', '.join(names)}")


if __name__ == "__main__":
    main()

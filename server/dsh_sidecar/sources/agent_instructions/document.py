"""What the engine knows about one document beyond the chain that governs it: the rule file it
is (when its rule set is on), and the conventions it uses while their setting is off. Hover and
diagnostics explain a document with these."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from dsh_sidecar.config import InstructionSettings
from dsh_sidecar.fs import LocalFileSystem

from .baseline import IGNORED, INCLUDED, OMITTED, TRUNCATED, BaselineLoad
from .confinement import Confinement
from .rules import Rule, RuleIndex, rule_set_of_path
from .usage import OffConvention, document_conventions, existing_imports, read_confined

# States whose file the engine reads: its text is what a convention check may look at.
READ_STATES = frozenset({INCLUDED, TRUNCATED, OMITTED, "duplicate", IGNORED})


@attrs.frozen
class DocumentFacts:
    rule: Rule | None = None
    conventions: tuple[OffConvention, ...] = ()
    # With instructions.imports off: each ``@path`` of the document (as written) that names an
    # existing file, which Claude Code would import.
    unfollowed: tuple[str, ...] = ()
    # A rule file of an enabled set that is not read: the project has more than
    # MAX_RULE_FILES rule files.
    beyond_rule_limit: bool = False


def document_facts(
    document: str,
    load: BaselineLoad,
    settings: InstructionSettings,
    fs: LocalFileSystem,
    home: str,
    confinement: Callable[[], Confinement],
    rules: RuleIndex | None = None,
) -> DocumentFacts:
    root = load.project_root
    rule = None
    rule_set = rule_set_of_path(root, document)
    beyond = False
    if rule_set is not None and rule_set.name in settings.rule_sets and rules is not None:
        rule = next((r for r in rules.rules() if r.abs_path == document), None)
        beyond = rule is None and rules.beyond_limit(document)
    text = None
    if not settings.imports:
        entry = next((e for e in load.entries if e.candidate.abs_path == document), None)
        in_chain = entry is not None and entry.state in READ_STATES
        rule_file = rule is not None and rule.rule_set == "claude"
        if in_chain or rule_file:
            text = read_confined(fs, document, settings.max_source_bytes, confinement)
    unfollowed: tuple[str, ...] = ()
    if text is not None:
        unfollowed = tuple(s.raw for s in existing_imports(text, document, home, fs))
    return DocumentFacts(
        rule,
        tuple(document_conventions(document, root, settings, fs, home, text)),
        unfollowed,
        beyond,
    )

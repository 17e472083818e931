/** What the context inspector shows, computed from sidecar answers (pure, no vscode). */
import { describeContext, isMessage, SURFACE_MESSAGE_EVENTS } from '../chat/convert';
import { pendingViews } from '../chat/pendingView';
import type { Change, DshEvent, Message, ScopesResult, SessionHeader } from '../protocol';
import type { InspectorAgentSession, InspectorContextItem, InspectorFileRow, InspectorState } from '../shared/inspectorMessages';
import { formatAge } from '../shared/text';

const encoder = new TextEncoder();

export function contextItem(message: Message): InspectorContextItem {
  const text = message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n\n');
  return { title: describeContext(message), text, bytes: encoder.encode(text).length };
}

/**
 * The workspace-instruction messages the model has seen, from the most recent baseline on:
 * older ones were superseded by it (a baseline is complete by definition).
 */
export function visibleInstructions(events: readonly DshEvent[]): Message[] {
  const messages: Message[] = [];
  for (const event of events) {
    if (!SURFACE_MESSAGE_EVENTS.has(event.type) || event.type !== 'user/message') continue;
    if (isMessage(event.data) && event.data.source.kind === 'agent-instructions') messages.push(event.data);
  }
  let lastBaseline = -1;
  messages.forEach((m, i) => {
    if (m.source['baseline'] === true) lastBaseline = i;
  });
  return lastBaseline >= 0 ? messages.slice(lastBaseline) : messages;
}

export interface AgentSessionInputs {
  header: SessionHeader;
  pending: readonly Message[];
  /** Its surface (the instruction files it was given are read from it). */
  surface?: readonly DshEvent[];
  /** The time of the last event of its log. */
  lastEventAt?: number;
  /** The workspace folder it is in (absolute), for its relative directory. */
  folder?: string;
  waiting?: number;
}

export interface InspectorInputs {
  session?: {
    id: string;
    folder: string;
    surface: readonly DshEvent[];
    pending: readonly Message[];
    canDrop?: boolean;
  };
  sessionNote?: string;
  agents?: AgentSessionInputs[];
  /** `dsh.instructions.ruleSets` as VS Code has it (the agents' hooks do not read it). */
  ruleSets?: readonly string[];
  chain?: { file: string; result: ScopesResult };
  chainNote?: string;
  error?: string;
  now: number;
}

export function buildInspectorState(inputs: InspectorInputs): InspectorState {
  const state: InspectorState = { session: undefined, chain: undefined, updatedAt: inputs.now };
  if (inputs.session !== undefined) {
    const s = inputs.session;
    state.session = {
      id: s.id,
      folder: s.folder,
      visible: visibleInstructions(s.surface).map(contextItem),
      pending: pendingViews(s.pending),
      pendingCount: s.pending.length,
      canDrop: s.canDrop === true,
    };
  }
  if (inputs.sessionNote !== undefined) state.sessionNote = inputs.sessionNote;
  if (inputs.agents !== undefined && inputs.agents.length > 0) {
    state.agents = inputs.agents.map((a) => agentSession(a, inputs.now));
    const note = ruleSetsNote(inputs.ruleSets ?? []);
    if (note !== undefined) state.agentsNote = note;
  }
  if (inputs.chain !== undefined) {
    const { file, result } = inputs.chain;
    const active = activeByPath(result, inputs.session?.id);
    state.chain = {
      file,
      projectRoot: result.projectRoot,
      directory: result.directory,
      files: result.files.map((f) => {
        const row: InspectorFileRow = {
          displayPath: f.displayPath,
          scope: scopeDirectory(f.scope),
          state: f.state,
          bytes: f.bytes,
        };
        if (f.reason !== undefined) row.reason = f.reason;
        if (typeof f.includedBytes === 'number') row.includedBytes = f.includedBytes;
        const change = active.get(f.displayPath);
        if (change !== undefined) row.active = change.action;
        return row;
      }),
    };
  }
  if (inputs.chainNote !== undefined) state.chainNote = inputs.chainNote;
  if (inputs.error !== undefined) state.error = inputs.error;
  return state;
}

/**
 * The directory part of a scope key (`<dir>\u0000<file name>`, e.g. `pkg`, `.` or `user-global`);
 * the NUL separator is not for display.
 */
export function scopeDirectory(scope: string): string {
  const nul = scope.indexOf('\u0000');
  return nul >= 0 ? scope.slice(0, nul) : scope;
}

/** What `sessionId` has active, keyed by display path (the one path form both sides share). */
function activeByPath(result: ScopesResult, sessionId: string | undefined): Map<string, Change> {
  const out = new Map<string, Change>();
  const entry = result.sessions.find((s) => s.sessionId === sessionId);
  for (const change of entry?.active ?? []) out.set(change.path, change);
  return out;
}

/** At most this many of the newest agents' sessions are shown. */
export const MAX_AGENT_SESSIONS = 10;

/**
 * The sessions that agents' hooks drive (their header has an `agent`) in one of `folders`
 * (absolute paths): the directory is the folder or below it. Newest first, as listed.
 */
export function agentSessionsIn(sessions: readonly SessionHeader[], folders: readonly string[]): SessionHeader[] {
  const roots = folders.map((f) => (f.length > 1 ? f.replace(/\/+$/, '') : f));
  const inside = (cwd: string) => roots.some((f) => cwd === f || cwd.startsWith(f === '/' ? f : `${f}/`));
  return sessions.filter((s) => typeof s.agent === 'string' && inside(s.cwd)).slice(0, MAX_AGENT_SESSIONS);
}

const AGENT_NAMES: Record<string, string> = { claude: 'Claude Code', codex: 'Codex CLI', gemini: 'Gemini CLI' };

export function agentName(agent: string | undefined): string {
  return agent === undefined ? 'an agent' : (AGENT_NAMES[agent] ?? agent);
}

/** `cwd` relative to `folder` ("." for the folder), or as it is when it is not inside. */
export function relativeDirectory(cwd: string, folder: string | undefined): string {
  if (folder === undefined) return cwd;
  const root = folder.length > 1 ? folder.replace(/\/+$/, '') : folder;
  if (cwd === root) return '.';
  const prefix = root === '/' ? root : `${root}/`;
  return cwd.startsWith(prefix) ? cwd.slice(prefix.length) : cwd;
}

/**
 * The instruction files a session's log says its model has in effect: each scope's latest
 * visible change, removals left out (from the latest baseline on, as `visibleInstructions`).
 */
export function toldFiles(surface: readonly DshEvent[]): string[] {
  const latest = new Map<string, Change>();
  for (const message of visibleInstructions(surface)) {
    const changes = Array.isArray(message.source['changes']) ? (message.source['changes'] as Change[]) : [];
    if (message.source['baseline'] === true) latest.clear();
    for (const change of changes) latest.set(change.scope, change);
  }
  return [...latest.values()].filter((c) => c.action !== 'remove').map((c) => c.path);
}

function agentSession(a: AgentSessionInputs, now: number): InspectorAgentSession {
  const agent = agentName(a.header.agent);
  const directory = relativeDirectory(a.header.cwd, a.folder);
  const clock = new Date(a.header.createdAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const out: InspectorAgentSession = {
    id: a.header.id,
    agent,
    directory,
    started: `started ${formatAge(a.header.createdAt, now)}`,
    label: `${agent} · ${clock} · ${directory}`,
    told: a.surface !== undefined ? toldFiles(a.surface) : [],
    waiting: a.waiting ?? 0,
    pending: a.pending.map(contextItem),
  };
  if (a.lastEventAt !== undefined) out.lastEvent = `last event ${formatAge(a.lastEventAt, now)}`;
  return out;
}

/**
 * Said when VS Code enables rule sets: the hooks the agents run (`dsh-sidecar hook`) take their
 * settings from their own command line (`--settings FILE`; `hooks install` writes none, so the
 * defaults, without rule sets), never from VS Code, so what VS Code shows is not what they get.
 */
export function ruleSetsNote(ruleSets: readonly string[]): string | undefined {
  if (ruleSets.length === 0) return undefined;
  const named = ruleSets.join(', ');
  return (
    `Rule sets enabled in VS Code (${named}) do not apply to these sessions: the agents' hooks read ` +
    "their settings from their own command line (dsh-sidecar hook --settings FILE), not from VS Code, " +
    'and as installed they use none.'
  );
}

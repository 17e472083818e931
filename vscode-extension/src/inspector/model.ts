/** What the context inspector shows, computed from sidecar answers (pure, no vscode). */
import { describeContext, isMessage, SURFACE_MESSAGE_EVENTS } from '../chat/convert';
import { pendingViews } from '../chat/pendingView';
import type { Change, DshEvent, Message, ScopesResult, SessionHeader } from '../protocol';
import type { InspectorContextItem, InspectorFileRow, InspectorState } from '../shared/inspectorMessages';

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

export interface InspectorInputs {
  session?: {
    id: string;
    folder: string;
    surface: readonly DshEvent[];
    pending: readonly Message[];
    canDrop?: boolean;
  };
  sessionNote?: string;
  agents?: { header: SessionHeader; pending: readonly Message[] }[];
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
    state.agents = inputs.agents.map(({ header, pending }) => ({
      id: header.id,
      agent: header.agent ?? '?',
      cwd: header.cwd,
      createdAt: header.createdAt,
      pending: pending.map(contextItem),
    }));
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

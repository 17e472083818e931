/** Messages between the extension and the context inspector webview (types only, shared by both sides). */
import type { PendingItemView } from './pendingItems';

export interface InspectorContextItem {
  title: string;
  text: string;
  bytes: number;
}

export interface InspectorFileRow {
  displayPath: string;
  scope: string;
  state: string;
  bytes: number | null;
  includedBytes?: number;
  reason?: string;
  /** What the live session currently has active for this file (e.g. "set"), if anything. */
  active?: string;
}

export interface InspectorAgentSession {
  /** Not shown (a raw id tells a reader nothing); it keys the row. */
  id: string;
  /** "Claude Code", "Codex CLI", "Gemini CLI" (or the agent's own name). */
  agent: string;
  /** The session's directory relative to its workspace folder ("." for the folder itself). */
  directory: string;
  /** "started 12 min ago". */
  started: string;
  /** "last event 2 min ago", when the log has one. */
  lastEvent?: string;
  /** What tells the session apart, for its heading and hover: agent, start time, directory. */
  label: string;
  /** The instruction files the session's log says the agent was given (in effect now). */
  told: string[];
  /** Touches its hooks kept while the store was busy (dsh/session/list waitingTouches). */
  waiting: number;
  /** Its inbox: what its next hook event delivers first. */
  pending: InspectorContextItem[];
}

export interface InspectorState {
  session:
    | {
        id: string;
        folder: string;
        /** The baseline the session's model saw, and later instruction updates, in order. */
        visible: InspectorContextItem[];
        pending: PendingItemView[];
        pendingCount: number;
        /** The sidecar implements dsh/context/discard: pending items get Drop buttons. */
        canDrop: boolean;
      }
    | undefined;
  /** Why there is no session section (e.g. "No chat session is open for this folder"). */
  sessionNote?: string;
  /** Sessions that agents' hooks drive in the open folders (`dsh-sidecar hooks install`), newest
   *  first, each with what its next hook event delivers. */
  agents?: InspectorAgentSession[];
  /** Why settings made in VS Code do not reach those sessions (the hooks read their own). */
  agentsNote?: string;
  chain:
    | {
        file: string;
        projectRoot: string;
        directory: string;
        files: InspectorFileRow[];
      }
    | undefined;
  chainNote?: string;
  error?: string;
  updatedAt: number;
}

export type ToInspector = { type: 'state'; state: InspectorState };
export type FromInspector =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'openChat' }
  | { type: 'discard'; sessionId: string; messageId: string; scopes?: string[] };

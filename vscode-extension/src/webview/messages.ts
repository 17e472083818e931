/** Messages between the extension and its two webviews (types only, shared by both sides). */
export type ChatItemKind = 'user' | 'assistant' | 'tool-call' | 'tool-result' | 'context';

export interface ChatItem {
  id: string;
  kind: ChatItemKind;
  /** A one-line heading (e.g. "read pkg/src/x.txt", "Workspace instructions: set pkg/AGENTS.md"). */
  title: string;
  text: string;
  isError?: boolean;
}

export interface CandidateView {
  label: string;
  mention: string;
  detail: string;
}

export type ToChat =
  | { type: 'init'; folder: string; sessionId: string | undefined; items: ChatItem[]; busy: boolean }
  | { type: 'items'; items: ChatItem[] }
  | { type: 'delta'; text: string }
  | { type: 'streamEnd' }
  | { type: 'busy'; busy: boolean }
  | { type: 'notice'; level: 'info' | 'error'; text: string }
  | { type: 'candidates'; requestId: number; candidates: CandidateView[] };

export type FromChat =
  | { type: 'ready' }
  | { type: 'send'; text: string; clientTimeZone?: string }
  | { type: 'stop' }
  | { type: 'mention'; requestId: number; query: string }
  | { type: 'newSession' }
  | { type: 'compact' };

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

export interface InspectorState {
  session:
    | {
        id: string;
        folder: string;
        /** The baseline the session's model saw, and later instruction updates, in order. */
        visible: InspectorContextItem[];
        pending: InspectorContextItem[];
        pendingCount: number;
      }
    | undefined;
  /** Why there is no session section (e.g. "No chat session is open for this folder"). */
  sessionNote?: string;
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
export type FromInspector = { type: 'ready' } | { type: 'refresh' } | { type: 'openChat' };

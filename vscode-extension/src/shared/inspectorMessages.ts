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
  id: string;
  agent: string;
  cwd: string;
  createdAt: number;
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

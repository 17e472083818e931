/** Messages between the extension and the chat webview (types only, shared by both sides). */
import type { PendingItemView } from './pendingItems';

export type ChatItemKind = 'user' | 'assistant' | 'tool-call' | 'tool-result' | 'context';

export interface ChatItem {
  id: string;
  kind: ChatItemKind;
  /** A one-line heading (e.g. "read pkg/src/x.txt", "Workspace instructions: set pkg/AGENTS.md"). */
  title: string;
  text: string;
  isError?: boolean;
  /** An answer the user stopped: what the model had said so far. */
  stopped?: boolean;
  /** Tool calls and results: the call they belong to (a result fills its call's card). */
  callId?: string;
  /** Tool calls: the tool and the file it works on (relative, as the model gave it). */
  tool?: string;
  file?: string;
  /** Tool results: how the call ended. */
  status?: ToolStatus;
  /** A write/edit card of an attempt the user discarded with Retry or Edit (its change may be on disk). */
  discarded?: boolean;
}

/** `held`: an edit kept back until the model has read the instructions that govern its file. */
export type ToolStatus = 'done' | 'failed' | 'rejected' | 'held';

export interface CandidateView {
  label: string;
  mention: string;
  /** "3 h ago". */
  age: string;
  /** The session's folder, when it is not this panel's. */
  detail: string;
}

export type ApprovalState = 'pending' | 'accepted' | 'rejected' | 'stopped';

export interface ApprovalView {
  id: string;
  tool: 'write' | 'edit';
  /** The file, relative to the folder. */
  path: string;
  isNewFile: boolean;
  state: ApprovalState;
  /** A code block the user applied from the chat (not a change the agent asked for). */
  byUser?: boolean;
  /** Shown instead of the usual verdict when only part was written ("2 of 3 hunks accepted: written."). */
  verdict?: string;
}

/** A prompt typed while the agent works, waiting for its turn (`PromptQueue` on the host). */
export interface QueuedPrompt {
  id: number;
  text: string;
}

/** One of the folder's sessions in the panel's session list. */
export interface SessionListItem {
  id: string;
  title: string;
  /** "3 h ago". */
  age: string;
  createdAt: number;
  current: boolean;
}

export interface SessionView {
  id: string;
  title: string | undefined;
}

export interface ModelView {
  text: string;
  configured: boolean;
}

/** Buttons a notice may offer. */
export type NoticeAction = 'retry' | 'configureModel' | 'openModelSettings' | 'showOutput';

export type ToChat =
  | {
      type: 'init';
      folder: string;
      session: SessionView | undefined;
      items: ChatItem[];
      busy: boolean;
      model: ModelView;
      /** The session's earlier prompts, oldest first (↑ recalls them). */
      history: string[];
      queue: QueuedPrompt[];
    }
  | { type: 'items'; items: ChatItem[] }
  | { type: 'delta'; text: string }
  | { type: 'streamEnd' }
  | { type: 'busy'; busy: boolean }
  /** Announced to screen readers (aria-live) and shown quietly. */
  | { type: 'status'; text: string }
  | { type: 'notice'; level: 'info' | 'error'; text: string; actions?: NoticeAction[] }
  | { type: 'clearNotice' }
  | { type: 'candidates'; requestId: number; candidates: CandidateView[] }
  /** The prompt never reached the model: back into the box, with the reason in view. */
  | { type: 'promptFailed'; text: string; reason: string; actions?: NoticeAction[] }
  | { type: 'queue'; items: QueuedPrompt[] }
  /** Queued prompts handed back after a stop or a failure. */
  | { type: 'restorePrompt'; texts: string[] }
  | { type: 'sessions'; sessions: SessionListItem[] }
  | { type: 'session'; session: SessionView | undefined }
  | { type: 'approval'; approval: ApprovalView }
  /** `canDrop`: the sidecar implements dsh/context/discard. */
  | { type: 'pending'; items: PendingItemView[]; canDrop: boolean }
  | { type: 'model'; model: ModelView }
  | { type: 'confirmCompact'; count: number }
  /** The chat was shown by its command (Ctrl+Alt+D): the prompt box takes the focus. */
  | { type: 'focusPrompt' }
  /** Whether the folder is trusted; untrusted (Restricted Mode) shows what that limits. */
  | { type: 'trust'; trusted: boolean };

export type FromChat =
  | { type: 'ready' }
  | { type: 'send'; text: string; clientTimeZone?: string }
  | { type: 'stop' }
  | { type: 'mention'; requestId: number; query: string }
  | { type: 'newSession' }
  /** Asks first; `compactConfirmed` is the user's yes. */
  | { type: 'compact' }
  | { type: 'compactConfirmed' }
  | { type: 'retry' }
  | { type: 'openLink'; href: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  /** A code block proposed as a change (a reviewed diff) to the file it names or one picked. */
  | { type: 'apply'; text: string; file?: string }
  | { type: 'newFile'; text: string; language: string }
  /** `reason`: why the user rejected it (optional); the model reads it in the tool result. */
  | { type: 'approve'; id: string; accept: boolean; reason?: string }
  | { type: 'showDiff'; id: string }
  | { type: 'unqueue'; id: number }
  | { type: 'listSessions' }
  | { type: 'switchSession'; id: string }
  /** Retry the last answer / send the edited last prompt (the old attempt is discarded first). */
  | { type: 'retryLast' }
  | { type: 'editLast'; text: string }
  | { type: 'renameSession'; id: string; title: string }
  /** Sent once the user confirmed in the panel. */
  | { type: 'deleteSession'; id: string; title: string }
  | { type: 'discard'; messageId: string; scopes?: string[] }
  | { type: 'action'; action: NoticeAction }
  /** Restricted Mode's banner: VS Code's own Manage Workspace Trust. */
  | { type: 'manageTrust' };

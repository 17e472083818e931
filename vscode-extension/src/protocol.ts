/**
 * Wire shapes of the dsh/ protocol (shared/design/protocol.md §2–§7), as the extension uses them.
 * Types only: the sidecar validates; the extension trusts its answers and checks what it renders.
 */

export interface TextBlock {
  type: 'text';
  text: string;
}

/** An assistant's request to run a tool, kept in the durable log so history can be replayed. */
export interface ToolCallBlock {
  type: 'tool-call';
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ContentBlock = TextBlock | ToolCallBlock;

export interface Source {
  kind: string;
  [key: string]: unknown;
}

export interface Change {
  action: 'set' | 'replace' | 'remove';
  scope: string;
  path: string;
  digest?: string;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant';
  content: ContentBlock[];
  source: Source;
}

export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

export interface DshEvent {
  type: string;
  seq: number;
  time: number;
  data: Record<string, unknown>;
  surfaceOp?: SurfaceOp;
  sourceEventSeqs?: number[];
}

export interface SessionHeader {
  id: string;
  createdAt: number;
  cwd: string;
  title?: string;
}

// --- §3 sessions --------------------------------------------------------------------------------

export interface SessionOpenParams {
  cwd: string;
  sessionId?: string;
  title?: string;
}
export interface SessionOpenResult {
  session: SessionHeader;
  resumed: boolean;
}
export interface SessionSurfaceResult {
  session: SessionHeader;
  capturedThroughSeq: number | null;
  events: DshEvent[];
}
export interface SessionEventsParams {
  sessionId: string;
  afterSeq?: number;
  limit?: number;
}
export interface SessionEventsResult {
  events: DshEvent[];
}
export interface AppendEvent {
  type: 'user/message' | 'assistant/message' | 'tool/result' | 'session/title';
  data: Record<string, unknown>;
  surfaceOp?: SurfaceOp;
}
export interface SessionAppendResult {
  seqs: number[];
}
export interface SessionCompactParams {
  sessionId: string;
  start: number;
  end: number;
  summary: string;
  compactionId?: string;
}

// --- §4 agent loop ------------------------------------------------------------------------------

export interface StepPrepareParams {
  sessionId: string;
  turn: number;
  step: number;
  prompt?: { text: string; clientTimeZone?: string; rpcId?: string };
}
export interface StepPrepareResult {
  messages: Message[];
  seqs: number[];
}

// --- §5 touch seam ------------------------------------------------------------------------------

export interface ToolResultNotification {
  sessionId: string;
  token: string;
  parentToken?: string;
  name: string;
  arguments: Record<string, unknown>;
  isError: boolean;
  aborted?: boolean;
}

// --- §6 pending context -------------------------------------------------------------------------

export type ScopeFileState =
  | 'included'
  | 'truncated'
  | 'omitted'
  | 'duplicate'
  | 'oversized'
  | 'unreadable'
  | 'ignored'
  | 'outside-project'
  | 'overridden';

/** One `@path` import (instructions.imports) and what became of it. */
export interface ImportedFile {
  path: string;
  displayPath: string;
  importer: string;
  state:
    | 'imported'
    | 'missing'
    | 'cycle'
    | 'too-deep'
    | 'outside'
    | 'unreadable'
    | 'over-budget'
    | 'in-chain'
    | 'repeated';
  depth: number;
  bytes?: number;
  reason?: string;
  target?: string;
}

/** What a rule file (instructions.ruleSets) applies to. */
export interface RuleInfo {
  ruleSet: 'copilot' | 'claude' | 'cursor';
  mode: 'always' | 'globs' | 'manual' | 'invalid';
  globs: string[];
}

export interface ScopeFile {
  path: string;
  displayPath: string;
  scope: string;
  state: ScopeFileState;
  /** Size on disk; null when the file could not even be stat'ed. */
  bytes: number | null;
  digest?: string;
  reason?: string;
  /** Bytes that reach the model (included or truncated files). */
  includedBytes?: number;
  /** The file's real path, when it is reached through a symlink. */
  target?: string;
  /** The `@path` imports met while loading it (instructions.imports). */
  imports?: ImportedFile[];
  /** For a rule file (instructions.ruleSets): what it applies to. */
  rule?: RuleInfo;
}

export interface ContextPendingResult {
  messages: Message[];
}

export interface ScopesResult {
  projectRoot: string;
  directory: string;
  files: ScopeFile[];
  sessions: { sessionId: string; active: Change[] }[];
}

export interface ContextDidChangeParams {
  sessionId: string;
  pendingCount: number;
}

// --- §7 session references ----------------------------------------------------------------------

export interface SessionCandidate {
  sessionId: string;
  label: string;
  cwd?: string;
  createdAt: number;
  mention: string;
}
export interface CandidatesResult {
  candidates: SessionCandidate[];
}

/**
 * Wire shapes of the dsh/ protocol (docs/protocol.md), and the method → [params, result] maps
 * that type every request and notification the extension sends.
 *
 * Interface names and fields follow docs/protocol.md's TypeScript blocks;
 * tests/editors/test_vscode_protocol_types.py parses both and fails when a method's params or
 * result fields drift apart, and `tsc` fails when a call site sends the wrong shape.
 * Types only: the sidecar validates; the extension trusts its answers and checks what it renders.
 */
import {
  CONTEXT_DID_CHANGE,
  SETTINGS_DID_CHECK,
  CONTEXT_DISCARD,
  EXPLAIN,
  CONTEXT_PENDING,
  CONTEXT_PREVIEW,
  type NotificationMethod,
  type RequestMethod,
  SCOPES,
  SESSION_APPEND,
  SESSION_CLOSE,
  SESSION_COMPACT,
  SESSION_DELETE,
  SESSION_EVENTS,
  SESSION_LIST,
  SESSION_OPEN,
  SESSION_REFERENCE_CANDIDATES,
  SESSION_SURFACE,
  STEP_END,
  STEP_PREPARE,
  TOOL_RESULT,
  TURN_END,
} from './methods';

// --- shapes -------------------------------------------------------------------------------------

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
  /** A session an agent's hooks drive: "claude", "codex" or "gemini". */
  agent?: string;
  agentSession?: string;
  parentId?: string;
}

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

/**
 * One file of a chain as the wire sends it. `path` and `displayPath` are always sent, but in an
 * answer asked with `compactPaths` (docs/protocol.md, "Compact paths"); SidecarClient.request
 * puts them back, so a result hands out WholeScopeFiles.
 */
export interface ScopeFile {
  path?: string;
  displayPath?: string;
  scope: string;
  state: ScopeFileState;
  /** Size on disk (0, or null from older servers, when unknown). */
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

/** A ScopeFile with both its paths, as every result lists it (compactPaths.ts expands the wire's). */
export interface WholeScopeFile extends ScopeFile {
  path: string;
  displayPath: string;
}

// --- sessions -----------------------------------------------------------------------------------

export interface SessionIdParams {
  sessionId: string;
}

export interface SessionOpenParams {
  cwd: string;
  sessionId?: string;
  title?: string;
}
export interface SessionOpenResult {
  session: SessionHeader;
  resumed: boolean;
}

export interface SessionListParams {
  query?: string;
  limit?: number;
}
export interface SessionListResult {
  sessions: SessionHeader[];
  /** Session id -> files named by touches the agent's hooks kept while the store was busy. */
  waitingTouches: Record<string, number>;
}

export interface SurfaceResult {
  session: SessionHeader;
  capturedThroughSeq: number | null;
  events: DshEvent[];
}

export interface SessionEventsParams {
  sessionId: string;
  afterSeq?: number;
  limit?: number;
}
export interface EventsResult {
  events: DshEvent[];
}

export interface AppendEvent {
  type: 'user/message' | 'assistant/message' | 'tool/result' | 'session/title';
  data: Record<string, unknown>;
  surfaceOp?: 'append';
}
export interface SessionAppendParams {
  sessionId: string;
  events: AppendEvent[];
}
export interface AppendResult {
  seqs: number[];
}

export interface SessionCompactParams {
  sessionId: string;
  start: number;
  end: number;
  summary: string;
  compactionId?: string;
}
export interface CompactResult {
  seq: number;
}

// --- the agent loop -----------------------------------------------------------------------------

export interface StepPrepareParams {
  sessionId: string;
  turn: number;
  step: number;
  prompt?: { text: string; clientTimeZone?: string; rpcId?: string };
}
export interface PrepareResult {
  messages: Message[];
  seqs: number[];
}

export interface StepEndParams {
  sessionId: string;
  turn: number;
  step: number;
}

export interface TurnEndParams {
  sessionId: string;
  turn: number;
  reason: string;
}

// --- touches ------------------------------------------------------------------------------------

export interface ToolResultParams {
  sessionId: string;
  token: string;
  parentToken?: string;
  name: string;
  arguments: Record<string, unknown>;
  isError: boolean;
  aborted?: boolean;
}

// --- pending context ----------------------------------------------------------------------------

export interface PendingResult {
  messages: Message[];
}

export interface ContextDiscardParams {
  sessionId: string;
  /** A pending message's id. */
  messageId: string;
  /** Drop only these changes of it (their `scope` keys); the whole message when absent. */
  scopes?: string[];
}

export interface ContextPreviewParams {
  cwd: string;
  /** Let the answer's files leave out the paths the client can work out (docs/protocol.md,
   *  "Compact paths"). SidecarClient.request always sets it and expands the answer. */
  compactPaths?: boolean;
}
export interface PreviewResult {
  text: string;
  files: WholeScopeFile[];
  omitted: string[];
  truncated: { path: string; originalBytes: number; includedBytes: number }[];
  baselineIdentity: string;
  projectRoot: string;
  notRead?: NotReadFiles[];
}
export interface NotReadFiles {
  agent: string;
  effect: string;
  paths: string[];
  enable: string;
  setting?: string;
}

export interface ScopesParams {
  uri: string;
  /** Let the answer's files leave out the paths the client can work out (docs/protocol.md,
   *  "Compact paths"). SidecarClient.request always sets it and expands the answer. */
  compactPaths?: boolean;
}
export interface ScopesResult {
  projectRoot: string;
  directory: string;
  files: WholeScopeFile[];
  sessions: { sessionId: string; active: Change[] }[];
  notRead?: NotReadFiles[];
}

export interface ContextDidChangeParams {
  sessionId: string;
  pendingCount: number;
}

export interface SettingRefusal {
  key: string;
  value: unknown;
  message: string;
}
export interface SettingsDidCheckParams {
  refused: SettingRefusal[];
}

// --- explain ------------------------------------------------------------------------------------

export interface ExplainParams {
  uri: string;
  cwd?: string;
}
export interface ExplainSidecarFile {
  path: string;
  displayPath: string;
  scope: string;
  state: string;
  bytes?: number;
  via?: 'baseline' | 'touch';
  includedBytes?: number;
  digest?: string;
  reason?: string;
}
export interface ExplainAgentFile {
  path: string;
  displayPath: string;
  kind: 'user-global' | 'project' | 'nested' | 'rule' | 'import';
  state: string;
  bytes?: number;
  keptBytes?: number;
  sentBytes?: number;
  when?: 'start' | 'after-read';
  reason?: string;
  boundary?: string;
}
export interface ExplainDifference {
  path: string;
  displayPath: string;
  reason: string;
}
export interface ExplainAgent {
  id: 'codex' | 'claude' | 'copilot-cli' | 'copilot-vscode' | 'gemini' | 'cursor' | 'qwen-code';
  name: string;
  workingDirectory: string;
  order: string;
  files: ExplainAgentFile[];
  onlyAgent: ExplainDifference[];
  onlySidecar: ExplainDifference[];
  sources: { url: string; checked: string }[];
  undocumented: string[];
  sizeLimit?: { setting: string; bytes: number; cut: 'root-first' };
  verified?: { version: string; package: string };
}
export interface ExplainResult {
  file: string;
  cwd: string;
  projectRoot: string;
  sidecar: { files: ExplainSidecarFile[]; maxBytes?: number };
  agents: ExplainAgent[];
}

// --- session references -------------------------------------------------------------------------

export interface SessionCandidate {
  sessionId: string;
  label: string;
  cwd?: string;
  createdAt: number;
  mention: string;
}
export interface CandidatesParams {
  sessionId: string;
  query?: string;
}
export interface CandidatesResult {
  candidates: SessionCandidate[];
}

// --- method maps --------------------------------------------------------------------------------

/** Every client → server request: its params and its result. */
export interface RequestTypes {
  [SESSION_OPEN]: [SessionOpenParams, SessionOpenResult];
  [SESSION_CLOSE]: [SessionIdParams, null];
  [SESSION_LIST]: [SessionListParams, SessionListResult];
  [SESSION_SURFACE]: [SessionIdParams, SurfaceResult];
  [SESSION_EVENTS]: [SessionEventsParams, EventsResult];
  [SESSION_APPEND]: [SessionAppendParams, AppendResult];
  [SESSION_COMPACT]: [SessionCompactParams, CompactResult];
  [SESSION_DELETE]: [SessionIdParams, null];
  [STEP_PREPARE]: [StepPrepareParams, PrepareResult];
  [STEP_END]: [StepEndParams, null];
  [TURN_END]: [TurnEndParams, null];
  [CONTEXT_PENDING]: [SessionIdParams, PendingResult];
  [CONTEXT_DISCARD]: [ContextDiscardParams, PendingResult];
  [CONTEXT_PREVIEW]: [ContextPreviewParams, PreviewResult];
  [SCOPES]: [ScopesParams, ScopesResult];
  [EXPLAIN]: [ExplainParams, ExplainResult];
  [SESSION_REFERENCE_CANDIDATES]: [CandidatesParams, CandidatesResult];
}

/** Every client → server notification: its params. */
export interface NotificationTypes {
  [TOOL_RESULT]: ToolResultParams;
}

/** Every server → client notification: its params. */
export interface ServerNotificationTypes {
  [CONTEXT_DID_CHANGE]: ContextDidChangeParams;
  [SETTINGS_DID_CHECK]: SettingsDidCheckParams;
}

export type RequestParams<M extends RequestMethod> = RequestTypes[M][0];
export type RequestResult<M extends RequestMethod> = RequestTypes[M][1];
export type NotificationParams<M extends NotificationMethod> = NotificationTypes[M];

/**
 * Compile-time completeness: a method added to methods.ts without an entry above (or an entry
 * for a method that is not in the table) makes these lines fail to type-check.
 */
type Exactly<A, B> = [Exclude<A, B>, Exclude<B, A>] extends [never, never] ? true : false;
type Assert<T extends true> = T;
export type RequestTypesComplete = Assert<Exactly<RequestMethod, keyof RequestTypes>>;
export type NotificationTypesComplete = Assert<Exactly<NotificationMethod, keyof NotificationTypes>>;

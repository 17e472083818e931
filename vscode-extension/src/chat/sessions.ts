/**
 * One sidecar session per workspace folder: opened on first use, resumed by id from
 * workspaceState in later windows, reopened after the sidecar restarts (a session is only live
 * in the process that opened it, and only live sessions receive touches).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import { SESSION_APPEND, SESSION_CLOSE, SESSION_DELETE, SESSION_EVENTS, SESSION_LIST, SESSION_OPEN, SESSION_SURFACE } from '../methods';
import type { SessionHeader, SessionOpenParams, SurfaceResult } from '../protocol';
import type { SessionListItem } from '../shared/chatMessages';
import { sessionsOfFolder } from './sessionList';

export interface LiveSession {
  header: SessionHeader;
  folder: vscode.WorkspaceFolder;
  resumed: boolean;
  /** Number of the next turn (turns count from 1 per session). */
  nextTurn: number;
}

const EVENTS_PAGE = 1000;
/** The session list shows at most this many of a folder's sessions. */
const LIST_LIMIT = 200;

export function sessionStateKey(folder: vscode.WorkspaceFolder): string {
  return `dsh.session:${folder.uri.toString()}`;
}

export class ChatSessions implements vscode.Disposable {
  private readonly live = new Map<string, LiveSession>();
  private readonly opening = new Map<string, Promise<LiveSession>>();
  private readonly changed = new vscode.EventEmitter<LiveSession>();
  /** A folder's session was opened, resumed or replaced. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly sidecar: Sidecar,
    private readonly state: vscode.Memento,
  ) {}

  /** The live session of `folder`, if one was opened in this sidecar process. */
  get(folder: vscode.WorkspaceFolder): LiveSession | undefined {
    return this.live.get(folder.uri.toString());
  }

  all(): LiveSession[] {
    return [...this.live.values()];
  }

  /** Open (or resume) the session of `folder`; concurrent callers share one request. */
  ensure(folder: vscode.WorkspaceFolder): Promise<LiveSession> {
    const key = folder.uri.toString();
    const existing = this.live.get(key);
    if (existing !== undefined) return Promise.resolve(existing);
    let pending = this.opening.get(key);
    if (pending === undefined) {
      const remembered = this.state.get<string>(sessionStateKey(folder));
      pending = this.open(folder, remembered).finally(() => this.opening.delete(key));
      this.opening.set(key, pending);
    }
    return pending;
  }

  /** Start a fresh session for `folder`, forgetting (and closing) the remembered one. */
  async replace(folder: vscode.WorkspaceFolder): Promise<LiveSession> {
    const previous = this.live.get(folder.uri.toString());
    this.live.delete(folder.uri.toString());
    const fresh = await this.open(folder, undefined);
    await this.closeQuietly(previous);
    return fresh;
  }

  /** Resume an earlier session of `folder` in its place (from the session list). */
  async switchTo(folder: vscode.WorkspaceFolder, sessionId: string): Promise<LiveSession> {
    const previous = this.live.get(folder.uri.toString());
    if (previous?.header.id === sessionId) return previous;
    this.live.delete(folder.uri.toString());
    const resumed = await this.open(folder, sessionId);
    await this.closeQuietly(previous);
    return resumed;
  }

  /** The folder's sessions in the store, newest first (`dsh/session/list`). */
  async list(folder: vscode.WorkspaceFolder, now = Date.now()): Promise<SessionListItem[]> {
    const { sessions } = await this.sidecar.request(SESSION_LIST, { limit: LIST_LIMIT, query: folder.uri.fsPath });
    const mine = canonical(folder.uri.fsPath);
    return sessionsOfFolder(sessions, (cwd) => canonical(cwd) === mine, this.get(folder)?.header.id, now);
  }

  /** Rename any session of the store (a `session/title` event; it need not be live). */
  async rename(folder: vscode.WorkspaceFolder, sessionId: string, title: string): Promise<void> {
    const live = this.get(folder);
    if (live?.header.id === sessionId) return this.setTitle(live, title);
    await this.sidecar.request(SESSION_APPEND, { sessionId, events: [{ type: 'session/title', data: { title } }] });
  }

  /**
   * Delete a session from the store for good (`dsh/session/delete`). The folder's current
   * session is replaced by a fresh one first, so the chat always has one.
   */
  async delete(folder: vscode.WorkspaceFolder, sessionId: string): Promise<void> {
    if (this.get(folder)?.header.id === sessionId) await this.replace(folder);
    await this.sidecar.request(SESSION_DELETE, { sessionId });
  }

  /** Name the session after its first prompt (a `session/title` event). */
  async setTitle(session: LiveSession, title: string): Promise<void> {
    await this.sidecar.request(SESSION_APPEND, {
      sessionId: session.header.id,
      events: [{ type: 'session/title', data: { title } }],
    });
    session.header = { ...session.header, title };
    this.changed.fire(session);
  }

  /** After a sidecar restart nothing is live any more: resume every session we had. */
  async reopenAll(): Promise<void> {
    const folders = [...this.live.values()].map((s) => s.folder);
    this.live.clear();
    await Promise.all(folders.map((f) => this.ensure(f).catch(() => undefined)));
  }

  /**
   * Make the remembered sessions of `folders` live again, without creating new ones, so that
   * the files opened and edited from now on are touches for them even before the chat opens.
   */
  async resumeRemembered(folders: readonly vscode.WorkspaceFolder[]): Promise<void> {
    const remembered = folders.filter((f) => this.state.get<string>(sessionStateKey(f)) !== undefined);
    await Promise.all(remembered.map((f) => this.ensure(f).catch(() => undefined)));
  }

  async surface(session: LiveSession): Promise<SurfaceResult> {
    return this.sidecar.request(SESSION_SURFACE, { sessionId: session.header.id });
  }

  dispose(): void {
    this.changed.dispose();
  }

  private async closeQuietly(session: LiveSession | undefined): Promise<void> {
    // A session left behind need not receive touches any more; its log stays in the store.
    if (session !== undefined) await this.sidecar.request(SESSION_CLOSE, { sessionId: session.header.id }).catch(() => undefined);
  }

  private async open(folder: vscode.WorkspaceFolder, sessionId: string | undefined): Promise<LiveSession> {
    // No title: a new session is named after its first prompt (setTitle).
    const params: SessionOpenParams = { cwd: folder.uri.fsPath };
    if (sessionId !== undefined) params.sessionId = sessionId;
    const result = await this.sidecar.request(SESSION_OPEN, params);
    const nextTurn = result.resumed ? (await this.lastTurn(result.session.id)) + 1 : 1;
    const session: LiveSession = { header: result.session, folder, resumed: result.resumed, nextTurn };
    this.live.set(folder.uri.toString(), session);
    await this.state.update(sessionStateKey(folder), result.session.id);
    this.changed.fire(session);
    return session;
  }

  /** The highest turn number in the raw log (the surface may have been compacted away). */
  private async lastTurn(sessionId: string): Promise<number> {
    let last = 0;
    let afterSeq: number | undefined;
    for (;;) {
      const params: { sessionId: string; limit: number; afterSeq?: number } = { sessionId, limit: EVENTS_PAGE };
      if (afterSeq !== undefined) params.afterSeq = afterSeq;
      const { events } = await this.sidecar.request(SESSION_EVENTS, params);
      for (const event of events) {
        const turn = event.data['turn'];
        if (typeof turn === 'number' && turn > last) last = turn;
      }
      if (events.length < EVENTS_PAGE) return last;
      afterSeq = events[events.length - 1]!.seq;
    }
  }
}

/** A directory path with symlinks resolved, for comparing a session's cwd with a folder. */
function canonical(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/**
 * The chat panel's page script: renders what the extension sends (history, streamed answers as
 * Markdown, proposed edits, pending context, sessions) and sends the user's actions back. It
 * holds no conversation state of its own beyond the prompt box: the extension is the source.
 */
import type {
  ApprovalView,
  ChatItem,
  FromChat,
  ModelView,
  NoticeAction,
  QueuedPrompt,
  SessionListItem,
  SessionView,
  ToChat,
} from '../shared/chatMessages';
import type { PendingItemView } from '../shared/pendingItems';
import { mergeIntoPrompt, plural } from '../shared/text';
import { button, byId, el } from './dom';
import { fillToolCard, renderApproval, renderItem, sourceTextOf } from './items';
import { PromptBox } from './promptBox';
import { StreamView } from './streamView';

declare function acquireVsCodeApi(): { postMessage(message: FromChat): void };

const vscode = acquireVsCodeApi();
const post = (m: FromChat): void => vscode.postMessage(m);
const log = byId('log');
const send = byId<HTMLButtonElement>('send');
const notice = byId('notice');
const status = byId('status');
const confirmBar = byId('confirm');
const pendingSection = byId('pending');
const queueList = byId<HTMLUListElement>('queue');
const sessionTitle = byId('session-title');
const sessionLabel = byId('session');
const sessionsButton = byId<HTMLButtonElement>('sessions-button');
const sessionList = byId<HTMLUListElement>('session-list');

let busy = false;
let streaming: StreamView | undefined;
let model: ModelView = { text: '', configured: false };
let shownSession: string | undefined;

const prompt = new PromptBox({
  submit: (text) => {
    hideNotice();
    scrollToEnd(true);
    // The browser's own zone: the sidecar stamps the prompt with it (time-context uses it).
    post({ type: 'send', text, clientTimeZone: Intl.DateTimeFormat().resolvedOptions().timeZone });
    updateSendButton();
  },
  stop: () => post({ type: 'stop' }),
  mentionQuery: (requestId, query) => post({ type: 'mention', requestId, query }),
});

// --- the conversation ---------------------------------------------------------------------------

/** Follow new output only while the user is at the bottom: reading further up is not yanked away. */
let following = true;
log.addEventListener('scroll', () => {
  following = log.scrollHeight - log.scrollTop - log.clientHeight < 48;
});

function scrollToEnd(force = false): void {
  if (force) following = true;
  if (following) log.scrollTop = log.scrollHeight;
}

function append(items: ChatItem[]): void {
  byIdOrNull('empty')?.remove();
  for (const item of items) {
    // A result goes into its call's card when that card is shown.
    const card = item.kind === 'tool-result' && item.callId !== undefined ? toolCard(item.callId) : null;
    if (card !== null) fillToolCard(card, item);
    else log.append(renderItem(item));
  }
  markLast();
  scrollToEnd();
}

/** Only the last prompt can be edited and only the last answer retried. */
function markLast(): void {
  for (const kind of ['user', 'assistant'] as const) {
    const all = log.querySelectorAll<HTMLElement>(`article.msg.${kind}`);
    all.forEach((a, i) => a.classList.toggle('last', i === all.length - 1));
  }
}

/** Edit in place: the prompt becomes a text box; Resend discards the last turn and sends it. */
function editLastPrompt(article: HTMLElement): void {
  const body = article.querySelector<HTMLElement>('.body');
  if (body === null || article.querySelector('.edit-box') !== null) return;
  const box = el('textarea', 'edit-box');
  box.value = sourceTextOf(article) ?? body.textContent ?? '';
  box.setAttribute('aria-label', 'Your last prompt, edited');
  const resend = button('Resend', 'primary', () => post({ type: 'editLast', text: box.value }));
  const cancel = button('Cancel', 'secondary', () => {
    row.remove();
    box.replaceWith(body);
  });
  const row = el('div', 'edit-actions');
  row.append(resend, cancel);
  body.replaceWith(box);
  box.after(row);
  box.focus();
}

function toolCard(callId: string): HTMLElement | null {
  for (const card of log.querySelectorAll<HTMLElement>('.tool-card')) if (card.dataset['callId'] === callId) return card;
  return null;
}

function byIdOrNull(id: string): HTMLElement | null {
  return document.getElementById(id);
}

/** The empty panel says which model answers, or that none is set up. */
function renderEmpty(): void {
  byIdOrNull('empty')?.remove();
  if (log.querySelector('.msg') !== null) return;
  const empty = el('div', 'empty');
  empty.id = 'empty';
  if (model.configured) {
    empty.append(el('p', '', 'Ask the agent about this folder. It reads and edits files; you approve every edit.'));
    const line = el('p', 'model');
    line.append('Model: ', el('strong', '', model.text), ' ');
    line.append(button('Change', 'link', () => post({ type: 'action', action: 'configureModel' })));
    empty.append(line);
  } else {
    empty.append(el('p', 'model', model.text));
    empty.append(button('Set up a model', 'primary', () => post({ type: 'action', action: 'configureModel' })));
  }
  log.append(empty);
}

function renderSession(session: SessionView | undefined): void {
  sessionTitle.textContent = session?.title !== undefined && session.title.trim() !== '' ? session.title : 'New session';
  sessionLabel.textContent = session !== undefined ? `session ${session.id.slice(0, 8)}` : 'no session';
  sessionLabel.title = session?.id ?? '';
}

function setBusy(value: boolean): void {
  busy = value;
  prompt.busy = value;
  document.body.classList.toggle('busy', busy);
  updateSendButton();
}

/** Send; while the agent works: Stop, or Queue once something is typed. */
function updateSendButton(): void {
  const label = !busy ? 'Send' : prompt.text.trim() === '' ? 'Stop' : 'Queue';
  send.textContent = label;
  send.classList.toggle('stop', label === 'Stop');
  send.setAttribute('aria-label', label === 'Stop' ? 'Stop the agent (Esc)' : label === 'Queue' ? 'Queue this message' : 'Send (Enter)');
}

send.addEventListener('click', () => {
  if (busy && prompt.text.trim() === '') {
    post({ type: 'stop' });
    return;
  }
  prompt.submit();
});
prompt.textarea.addEventListener('input', updateSendButton);

// Links and code-block buttons, by delegation (the CSP allows no inline handlers).
function onLogActivate(e: Event): void {
  const target = e.target as HTMLElement;
  const link = target.closest<HTMLElement>('a[data-href]');
  if (link !== null) {
    e.preventDefault();
    post({ type: 'openLink', href: link.dataset['href'] ?? '' });
    return;
  }
  const action = target.closest<HTMLButtonElement>('button[data-action]');
  if (action?.dataset['action'] === 'retry-last') {
    post({ type: 'retryLast' });
    return;
  }
  if (action?.dataset['action'] === 'edit-last') {
    const article = action.closest<HTMLElement>('article.msg');
    if (article !== null) editLastPrompt(article);
    return;
  }
  if (action?.dataset['action'] === 'copy-message') {
    const article = action.closest<HTMLElement>('article.msg');
    post({ type: 'copy', text: article !== null ? (sourceTextOf(article) ?? '') : '' });
    return;
  }
  if (action !== null) {
    const block = action.closest<HTMLElement>('.code-block');
    const code = block?.querySelector('code')?.textContent ?? '';
    const kind = action.dataset['action'];
    if (kind === 'apply') post({ type: 'apply', text: code, ...(block?.dataset['file'] !== undefined ? { file: block.dataset['file'] } : {}) });
    else if (kind === 'new-file') post({ type: 'newFile', text: code, language: block?.dataset['lang'] ?? '' });
    else post({ type: kind === 'insert' ? 'insert' : 'copy', text: code });
  }
}
log.addEventListener('click', onLogActivate);
log.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.target as HTMLElement).matches('a[data-href]')) onLogActivate(e);
});

// --- notices, status, confirmation ----------------------------------------------------------------

const ACTION_LABELS: Record<NoticeAction, string> = {
  retry: 'Retry',
  configureModel: 'Set up the model',
  openModelSettings: 'Model settings',
  showOutput: 'Show output',
};

function showNotice(level: 'info' | 'error', text: string, actions: NoticeAction[] = []): void {
  notice.hidden = false;
  notice.className = level;
  // Errors interrupt (a screen reader reads them at once); information waits its turn.
  notice.setAttribute('role', level === 'error' ? 'alert' : 'status');
  notice.replaceChildren(el('span', 'text', text));
  for (const action of actions) {
    notice.append(
      button(ACTION_LABELS[action], action === 'retry' ? 'primary' : 'secondary', () => {
        if (action === 'retry') hideNotice();
        post({ type: 'action', action });
      }),
    );
  }
  notice.append(button('×', 'dismiss', hideNotice, 'Dismiss'));
  notice.scrollIntoView({ block: 'nearest' });
}

function hideNotice(): void {
  notice.hidden = true;
  notice.replaceChildren();
}

function announce(text: string): void {
  status.textContent = text;
}

function askCompact(count: number): void {
  confirmBar.hidden = false;
  confirmBar.replaceChildren(
    el('span', 'text', `Replace the ${plural(count, 'message')} in the model's view by a summary the model writes? They stay in the session's log.`),
  );
  const yes = button('Compact', 'primary', () => {
    confirmBar.hidden = true;
    post({ type: 'compactConfirmed' });
  });
  const no = button('Cancel', 'secondary', () => {
    confirmBar.hidden = true;
  });
  confirmBar.append(yes, no);
  // As for Delete: a stray Enter must not replace the history (Tab reaches Compact).
  no.focus();
}

/** Deleting is for good: asked in the panel first, like compaction. */
function askDelete(s: SessionListItem): void {
  toggleSessions(false);
  confirmBar.hidden = false;
  confirmBar.replaceChildren(
    el('span', 'text', `Delete the session "${s.title}"? Its whole conversation is removed from the session store; this cannot be undone.`),
  );
  const yes = button('Delete', 'primary', () => {
    confirmBar.hidden = true;
    post({ type: 'deleteSession', id: s.id, title: s.title });
  });
  const no = button('Cancel', 'secondary', () => {
    confirmBar.hidden = true;
  });
  confirmBar.append(yes, no);
  no.focus();
}

// --- queue, pending context, approvals -----------------------------------------------------------

function renderQueue(items: QueuedPrompt[]): void {
  queueList.replaceChildren();
  queueList.hidden = items.length === 0;
  for (const item of items) {
    const li = el('li', 'queued');
    li.append(el('span', 'label', 'Queued'), el('span', 'text', item.text));
    li.append(button('×', 'dismiss', () => post({ type: 'unqueue', id: item.id }), 'Remove this queued message'));
    queueList.append(li);
  }
}

function renderPending(items: PendingItemView[], canDrop: boolean): void {
  pendingSection.replaceChildren();
  pendingSection.hidden = items.length === 0;
  if (items.length === 0) return;
  pendingSection.append(el('h2', '', `Pending for the next step (${items.length})`));
  for (const item of items) {
    const row = el('div', 'pending-item');
    const details = el('details');
    const summary = el('summary', '', item.title);
    details.append(summary, el('pre', '', item.text));
    row.append(details);
    if (canDrop) row.append(button('Drop', 'secondary', () => post({ type: 'discard', messageId: item.messageId }), `Drop ${item.title}`));
    pendingSection.append(row);
    for (const change of canDrop ? item.changes : []) {
      const sub = el('div', 'pending-change');
      sub.append(el('span', '', change.label));
      sub.append(
        button('Drop', 'link', () => post({ type: 'discard', messageId: item.messageId, scopes: [change.scope] }), `Drop only ${change.label}`),
      );
      pendingSection.append(sub);
    }
  }
}

function renderApprovalCard(view: ApprovalView): void {
  const card = renderApproval(view, {
    diff: () => post({ type: 'showDiff', id: view.id }),
    accept: () => post({ type: 'approve', id: view.id, accept: true }),
    reject: (reason) => post({ type: 'approve', id: view.id, accept: false, ...(reason.trim() !== '' ? { reason } : {}) }),
  });
  const existing = byIdOrNull(card.id);
  if (existing !== null) existing.replaceWith(card);
  else {
    // Focus stays where the user is (usually the prompt box): a card that took it would turn a
    // Space or Enter typed for something else into Accept, and write the file. The card is in
    // the Tab order (Shift+Tab from the prompt box reaches it) and the status line, a live
    // region, announces it.
    log.append(card);
    scrollToEnd();
  }
}

// --- sessions -----------------------------------------------------------------------------------

/** The search typed into the session list; kept while the list is re-rendered (a rename). */
let sessionQuery = '';

function toggleSessions(open: boolean): void {
  sessionList.hidden = !open;
  sessionsButton.setAttribute('aria-expanded', String(open));
  if (open) {
    // Each opening starts unfiltered: a search left from last time could hide every session.
    sessionQuery = '';
    sessionList.replaceChildren(el('li', 'muted', 'Loading…'));
    post({ type: 'listSessions' });
  }
}


function renderSessions(sessions: SessionListItem[]): void {
  sessionList.replaceChildren();
  // Search: filters the titles as one types (the list holds the folder's sessions already).
  const searchRow = el('li', 'search');
  searchRow.setAttribute('role', 'presentation');
  const search = el('input', 'session-search');
  search.type = 'search';
  search.placeholder = 'Search sessions';
  search.setAttribute('aria-label', 'Search the sessions of this folder by title');
  search.value = sessionQuery;
  searchRow.append(search);
  sessionList.append(searchRow);
  if (sessions.length === 0) sessionList.append(el('li', 'muted', 'No sessions yet.'));
  const rows: { li: HTMLElement; title: string }[] = [];
  sessions.forEach((s, i) => {
    const li = el('li', s.current ? 'current' : '');
    li.id = `session-option-${i}`;
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', String(s.current));
    li.tabIndex = -1;
    li.dataset['id'] = s.id;
    const title = el('span', 'title', s.title);
    const rename = el('button', 'secondary row-action rename', 'Rename');
    rename.type = 'button';
    rename.setAttribute('aria-label', `Rename ${s.title}`);
    rename.addEventListener('click', (e) => {
      e.stopPropagation();
      editTitle(li, title, s);
    });
    const remove = el('button', 'secondary row-action delete', 'Delete');
    remove.type = 'button';
    remove.setAttribute('aria-label', `Delete ${s.title}`);
    remove.addEventListener('click', (e) => {
      e.stopPropagation();
      askDelete(s);
    });
    li.append(title, el('span', 'age', s.age), rename, remove);
    li.addEventListener('click', () => pickSession(s));
    sessionList.append(li);
    rows.push({ li, title: s.title.toLowerCase() });
  });
  // Said when the search hides every session, so the list is never a blank box.
  const noMatch = el('li', 'muted no-match', 'No conversations match');
  noMatch.setAttribute('role', 'status');
  const filter = (): void => {
    sessionQuery = search.value;
    const needle = search.value.trim().toLowerCase();
    for (const row of rows) row.li.hidden = needle !== '' && !row.title.includes(needle);
    noMatch.hidden = rows.length === 0 || rows.some((row) => !row.li.hidden);
  };
  sessionList.append(noMatch);
  search.addEventListener('input', filter);
  filter();
  const first = sessionList.querySelector<HTMLElement>('li.current') ?? sessionList.querySelector<HTMLElement>('li[role=option]');
  if (sessionQuery !== '') search.focus();
  else first?.focus();
}

/** Rename in place: the title becomes a text box; Enter saves, Esc cancels. */
function editTitle(li: HTMLElement, title: HTMLElement, s: SessionListItem): void {
  const input = el('input', 'rename-input');
  input.type = 'text';
  input.value = s.title;
  input.setAttribute('aria-label', `New title for ${s.title}`);
  title.replaceWith(input);
  input.focus();
  input.select();
  input.addEventListener('click', (e) => e.stopPropagation());
  input.addEventListener('keydown', (e) => {
    e.stopPropagation();
    if (e.key === 'Enter') {
      e.preventDefault();
      post({ type: 'renameSession', id: s.id, title: input.value });
    } else if (e.key === 'Escape') {
      e.preventDefault();
      input.replaceWith(title);
      li.focus();
    }
  });
}

function pickSession(s: SessionListItem): void {
  toggleSessions(false);
  sessionsButton.focus();
  if (!s.current) post({ type: 'switchSession', id: s.id });
}

sessionsButton.addEventListener('click', () => toggleSessions(sessionList.hidden));
sessionList.addEventListener('keydown', (e) => {
  const options = [...sessionList.querySelectorAll<HTMLElement>('li[role=option]')];
  const at = options.indexOf(document.activeElement as HTMLElement);
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    e.preventDefault();
    options[(at + (e.key === 'ArrowDown' ? 1 : options.length - 1)) % options.length]?.focus();
  } else if (e.key === 'Enter' && at >= 0) {
    e.preventDefault();
    options[at]?.click();
  } else if (e.key === 'Escape') {
    e.preventDefault();
    toggleSessions(false);
    sessionsButton.focus();
  }
});
byId('new-session').addEventListener('click', () => post({ type: 'newSession' }));
byId('manage-trust').addEventListener('click', () => post({ type: 'manageTrust' }));
byId('compact').addEventListener('click', () => post({ type: 'compact' }));

// --- messages from the extension ----------------------------------------------------------------

window.addEventListener('message', (event: MessageEvent<ToChat>) => {
  const m = event.data;
  switch (m.type) {
    case 'init':
      following = true;
      if (m.session?.id !== shownSession) {
        // Another session: what was said about the previous one no longer applies.
        hideNotice();
        announce('');
        confirmBar.hidden = true;
        shownSession = m.session?.id;
      }
      streaming?.remove();
      streaming = undefined;
      log.replaceChildren();
      model = m.model;
      renderSession(m.session);
      append(m.items);
      renderEmpty();
      prompt.setHistory(m.history);
      renderQueue(m.queue);
      renderPending([], false);
      setBusy(m.busy);
      break;
    case 'items':
      append(m.items);
      break;
    case 'delta':
      if (streaming === undefined) {
        byIdOrNull('empty')?.remove();
        streaming = new StreamView(log, scrollToEnd);
      }
      streaming.push(m.text);
      break;
    case 'streamEnd':
      // The recorded assistant message follows and replaces the streamed draft.
      streaming?.remove();
      streaming = undefined;
      break;
    case 'busy':
      setBusy(m.busy);
      break;
    case 'status':
      announce(m.text);
      break;
    case 'notice':
      showNotice(m.level, m.text, m.actions);
      break;
    case 'clearNotice':
      hideNotice();
      break;
    case 'candidates':
      prompt.showCandidates(m.requestId, m.candidates);
      break;
    case 'promptFailed':
      // Nothing was sent: the prompt goes back into the box, with the reason right above it.
      prompt.setText(mergeIntoPrompt(prompt.text, [m.text]));
      showNotice('error', m.reason, m.actions);
      updateSendButton();
      break;
    case 'queue':
      renderQueue(m.items);
      break;
    case 'restorePrompt':
      if (m.texts.length > 0) {
        prompt.setText(mergeIntoPrompt(prompt.text, m.texts));
        // Said after whatever the turn's end announced ("Stopped. …"), not instead of it.
        announce(`${status.textContent ?? ''} ${plural(m.texts.length, 'queued message')} put back into the box.`.trim());
        updateSendButton();
      }
      break;
    case 'sessions':
      renderSessions(m.sessions);
      break;
    case 'session':
      renderSession(m.session);
      break;
    case 'approval':
      renderApprovalCard(m.approval);
      break;
    case 'pending':
      renderPending(m.items, m.canDrop);
      break;
    case 'model':
      model = m.model;
      renderEmpty();
      break;
    case 'confirmCompact':
      askCompact(m.count);
      break;
    case 'focusPrompt':
      // The view can get focus while nothing inside it has any (it was hidden, or the user was
      // elsewhere in it): the command that shows the chat means "let me type".
      prompt.textarea.focus();
      break;
    case 'trust':
      byId('restricted').hidden = m.trusted;
      break;
  }
});

post({ type: 'ready' });
prompt.textarea.focus();

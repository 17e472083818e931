/** The context inspector's page script: renders the state the extension computes. */
import type { FromInspector, InspectorContextItem, InspectorState, ToInspector } from '../shared/inspectorMessages';
import type { PendingItemView } from '../shared/pendingItems';
import { pathText } from './dom';

declare function acquireVsCodeApi(): { postMessage(message: FromInspector): void };

const vscode = acquireVsCodeApi();
const root = document.getElementById('root') as HTMLElement;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== '') node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function formatBytes(n: number | null): string {
  if (n === null) return '—';
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`;
}

/** "41 B", or "2.0 KiB of 90.0 KiB" when the budget cut the file. */
function fileSize(bytes: number | null, included: number | undefined, state: string): string {
  if (state === 'truncated' && included !== undefined) return `${formatBytes(included)} of ${formatBytes(bytes)}`;
  return formatBytes(bytes);
}

function contextList(items: InspectorContextItem[], empty: string, kind: string): HTMLElement {
  if (items.length === 0) return el('p', 'muted', empty);
  const list = el('div', `context-list ${kind}`);
  for (const item of items) {
    const details = el('details', 'context-item');
    const summary = el('summary');
    summary.append(el('span', 'title', item.title), el('span', 'bytes', formatBytes(item.bytes)));
    details.append(summary, el('pre', '', item.text));
    list.append(details);
  }
  return list;
}

/** The pending list, each item (and each of several changes) with a Drop button when possible. */
function pendingList(sessionId: string, items: PendingItemView[], canDrop: boolean): HTMLElement {
  if (items.length === 0) return el('p', 'muted', 'Nothing pending.');
  const list = el('div', 'context-list pending');
  for (const item of items) {
    const details = el('details', 'context-item');
    details.dataset['messageId'] = item.messageId;
    const summary = el('summary');
    summary.append(pathText('title', item.title), el('span', 'bytes', formatBytes(item.bytes)));
    if (canDrop) summary.append(dropButton(`Drop ${item.title}`, { type: 'discard', sessionId, messageId: item.messageId }));
    details.append(summary);
    for (const change of canDrop ? item.changes : []) {
      const row = el('div', 'change');
      row.append(pathText('label', change.label));
      row.append(dropButton(`Drop only ${change.label}`, { type: 'discard', sessionId, messageId: item.messageId, scopes: [change.scope] }));
      details.append(row);
    }
    details.append(el('pre', '', item.text));
    list.append(details);
  }
  return list;
}

function dropButton(label: string, message: FromInspector): HTMLButtonElement {
  const b = el('button', 'link drop', 'Drop');
  b.type = 'button';
  b.setAttribute('aria-label', label);
  b.title = label;
  b.addEventListener('click', (e) => {
    e.preventDefault(); // inside <summary>: do not also fold/unfold
    vscode.postMessage(message);
  });
  return b;
}

function render(state: InspectorState): void {
  const parts: HTMLElement[] = [];
  if (state.error !== undefined) parts.push(el('p', 'error', state.error));

  const session = el('section', 'session');
  session.append(el('h2', '', 'Session'));
  if (state.session === undefined) {
    session.append(el('p', 'muted', state.sessionNote ?? 'No session.'));
  } else {
    const s = state.session;
    const meta = el('p', 'meta');
    meta.append(el('span', '', s.folder), el('code', 'session-id', s.id));
    session.append(meta, el('h3', '', 'Instructions the agent has seen'));
    session.append(contextList(s.visible, 'None yet: the baseline arrives with the first prompt.', 'visible'));
    const pendingTitle = el('h3', '', 'Pending for the next step ');
    pendingTitle.append(el('span', `badge${s.pendingCount > 0 ? ' hot' : ''}`, String(s.pendingCount)));
    session.append(pendingTitle, pendingList(s.id, s.pending, s.canDrop));
  }
  parts.push(session);

  if (state.agents !== undefined && state.agents.length > 0) {
    const agents = el('section', 'agents');
    agents.append(el('h2', '', "Agents' sessions"));
    if (state.agentsNote !== undefined) agents.append(el('p', 'note agents-note', state.agentsNote));
    for (const a of state.agents) {
      // Named as a person knows it (agent, time, directory); the raw id is never shown.
      const item = el('div', 'agent-session');
      item.setAttribute('role', 'group');
      item.setAttribute('aria-label', a.label);
      item.title = a.label;
      const head = el('h3', 'agent-head');
      head.append(el('span', 'agent-name', a.agent), ' in ', pathText('path agent-dir', a.directory));
      const when = el('p', 'meta agent-when', [a.started, a.lastEvent].filter((t) => t !== undefined).join(' · '));
      const told = el('p', 'agent-told');
      told.append(el('span', 'muted', 'Given: '));
      if (a.told.length === 0) told.append('no instruction files');
      else a.told.forEach((path, i) => told.append(...(i > 0 ? [', '] : []), pathText('path', path)));
      const waiting = el('p', `agent-waiting${a.waiting > 0 ? ' hot' : ''}`, a.waiting > 0 ? `${a.waiting} ${a.waiting === 1 ? 'touch' : 'touches'} waiting` : 'No touches waiting.');
      item.append(head, when, told, waiting);
      if (a.pending.length > 0) {
        item.append(el('p', 'muted', 'Its next hook event delivers:'), contextList(a.pending, '', 'agent-pending'));
      }
      agents.append(item);
    }
    parts.push(agents);
  }

  const chain = el('section', 'chain');
  chain.append(el('h2', '', 'Instruction chain'));
  if (state.chain === undefined) {
    chain.append(el('p', 'muted', state.chainNote ?? ''));
  } else {
    const c = state.chain;
    const about = el('p', 'meta');
    about.append('for ', pathText('path', c.file));
    chain.append(about);
    if (c.files.length === 0) {
      chain.append(el('p', 'muted', 'No instruction files apply to this file.'));
    } else {
      const table = el('table');
      const head = el('tr');
      for (const h of ['File', 'State', 'Size', 'Session']) head.append(el('th', '', h));
      table.append(head);
      for (const f of c.files) {
        const row = el('tr', `state-${f.state}`);
        const file = el('td', 'file');
        file.append(pathText('path', f.displayPath), pathText('scope', `scope ${f.scope}`));
        const stateCell = el('td', 'state', f.state);
        if (f.reason !== undefined) stateCell.title = f.reason;
        row.append(file, stateCell, el('td', 'bytes', fileSize(f.bytes, f.includedBytes, f.state)), el('td', 'active', f.active ?? '—'));
        table.append(row);
      }
      chain.append(table);
    }
  }
  parts.push(chain);

  const footer = el('p', 'footer', `Updated ${new Date(state.updatedAt).toLocaleTimeString()}`);
  const refresh = el('button', 'link', 'Refresh');
  refresh.addEventListener('click', () => vscode.postMessage({ type: 'refresh' }));
  const chat = el('button', 'link', 'Open chat');
  chat.addEventListener('click', () => vscode.postMessage({ type: 'openChat' }));
  footer.append(' · ', refresh, ' · ', chat);
  parts.push(footer);

  // Keep open <details> open across refreshes (they are rebuilt each time).
  const open = new Set([...root.querySelectorAll('details[open] summary .title')].map((n) => n.textContent));
  root.replaceChildren(...parts);
  for (const summary of root.querySelectorAll('details summary .title')) {
    if (open.has(summary.textContent)) summary.closest('details')?.setAttribute('open', '');
  }
}

window.addEventListener('message', (event: MessageEvent<ToInspector>) => {
  if (event.data.type === 'state') render(event.data.state);
});
vscode.postMessage({ type: 'ready' });

/**
 * The chat panel's page script. Renders what the extension sends, and sends prompts, stops and
 * mention queries back. Model text is only ever set as textContent, never as HTML.
 */
import { applyMention, findMentionQuery, type MentionQuery, moveSelection } from '../chat/mentions';
import type { CandidateView, ChatItem, FromChat, ToChat } from './messages';

declare function acquireVsCodeApi(): { postMessage(message: FromChat): void };

const vscode = acquireVsCodeApi();
const log = byId('log');
const prompt = byId('prompt') as HTMLTextAreaElement;
const send = byId('send') as HTMLButtonElement;
const notice = byId('notice');
const mentions = byId('mentions') as HTMLUListElement;
const sessionLabel = byId('session');

let busy = false;
let streaming: HTMLElement | undefined;
let mentionAt: MentionQuery | undefined;
let candidates: CandidateView[] = [];
let selected = -1;
let mentionRequestId = 0;

function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`missing #${id}`);
  return el;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderItem(item: ChatItem): HTMLElement {
  switch (item.kind) {
    case 'user':
      return el('div', 'msg user', item.text);
    case 'assistant':
      return el('div', 'msg assistant', item.text);
    default: {
      // Tool traffic and sourced context are folded away: present, but not in the way.
      const details = el('details', `msg ${item.kind}${item.isError === true ? ' error' : ''}`);
      details.append(el('summary', '', item.title), el('pre', '', item.text));
      return details;
    }
  }
}

function append(items: ChatItem[]): void {
  for (const item of items) log.append(renderItem(item));
  log.scrollTop = log.scrollHeight;
}

function setBusy(value: boolean): void {
  busy = value;
  send.textContent = busy ? 'Stop' : 'Send';
  send.classList.toggle('stop', busy);
  document.body.classList.toggle('busy', busy);
}

function showNotice(level: 'info' | 'error', text: string): void {
  notice.hidden = false;
  notice.className = level;
  notice.textContent = text;
}

function submit(): void {
  if (busy) {
    vscode.postMessage({ type: 'stop' });
    return;
  }
  const text = prompt.value;
  if (text.trim() === '') return;
  prompt.value = '';
  closeMentions();
  notice.hidden = true;
  // The browser's own zone: the sidecar stamps the prompt with it (time-context uses it).
  const clientTimeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  vscode.postMessage({ type: 'send', text, clientTimeZone });
}

// --- mentions -----------------------------------------------------------------------------------

function updateMentionQuery(): void {
  const at = findMentionQuery(prompt.value, prompt.selectionStart ?? prompt.value.length);
  mentionAt = at;
  if (at === undefined) {
    closeMentions();
    return;
  }
  mentionRequestId += 1;
  vscode.postMessage({ type: 'mention', requestId: mentionRequestId, query: at.query });
}

function showCandidates(requestId: number, list: CandidateView[]): void {
  if (requestId !== mentionRequestId || mentionAt === undefined) return; // a stale answer
  candidates = list;
  selected = list.length > 0 ? 0 : -1;
  renderCandidates();
}

function renderCandidates(): void {
  mentions.replaceChildren();
  if (candidates.length === 0) {
    mentions.hidden = true;
    return;
  }
  candidates.forEach((c, i) => {
    const li = el('li', i === selected ? 'selected' : '');
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', String(i === selected));
    li.append(el('span', 'label', c.label), el('span', 'detail', c.detail));
    li.addEventListener('mousedown', (e) => {
      e.preventDefault(); // keep the caret in the textarea
      choose(i);
    });
    mentions.append(li);
  });
  mentions.hidden = false;
}

function choose(index: number): void {
  const candidate = candidates[index];
  if (candidate === undefined || mentionAt === undefined) return;
  const next = applyMention(prompt.value, mentionAt, candidate.mention);
  prompt.value = next.text;
  prompt.setSelectionRange(next.cursor, next.cursor);
  closeMentions();
  prompt.focus();
}

function closeMentions(): void {
  mentionAt = undefined;
  candidates = [];
  selected = -1;
  mentions.hidden = true;
  mentions.replaceChildren();
}

// --- events -------------------------------------------------------------------------------------

prompt.addEventListener('input', updateMentionQuery);
prompt.addEventListener('click', updateMentionQuery);
prompt.addEventListener('keydown', (e) => {
  if (!mentions.hidden && candidates.length > 0) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      selected = moveSelection(selected, e.key === 'ArrowDown' ? 1 : -1, candidates.length);
      renderCandidates();
      e.preventDefault();
      return;
    }
    if (e.key === 'Enter' || e.key === 'Tab') {
      choose(selected);
      e.preventDefault();
      return;
    }
    if (e.key === 'Escape') {
      closeMentions();
      e.preventDefault();
      return;
    }
  }
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
send.addEventListener('click', submit);
byId('new-session').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
byId('compact').addEventListener('click', () => vscode.postMessage({ type: 'compact' }));

window.addEventListener('message', (event: MessageEvent<ToChat>) => {
  const m = event.data;
  switch (m.type) {
    case 'init':
      log.replaceChildren();
      streaming = undefined;
      sessionLabel.textContent = m.sessionId !== undefined ? `session ${m.sessionId.slice(0, 8)}` : 'no session';
      sessionLabel.title = m.sessionId ?? '';
      append(m.items);
      setBusy(m.busy);
      break;
    case 'items':
      append(m.items);
      break;
    case 'delta':
      if (streaming === undefined) {
        streaming = el('div', 'msg assistant streaming');
        log.append(streaming);
      }
      streaming.textContent = (streaming.textContent ?? '') + m.text;
      log.scrollTop = log.scrollHeight;
      break;
    case 'streamEnd':
      // The recorded assistant message follows and replaces the streamed draft.
      streaming?.remove();
      streaming = undefined;
      break;
    case 'busy':
      setBusy(m.busy);
      break;
    case 'notice':
      showNotice(m.level, m.text);
      break;
    case 'candidates':
      showCandidates(m.requestId, m.candidates);
      break;
  }
});

vscode.postMessage({ type: 'ready' });
prompt.focus();

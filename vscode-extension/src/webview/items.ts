/** One chat item → its element. Model text is rendered by markdown-it (raw HTML off). */
import type { ApprovalView, ChatItem } from '../shared/chatMessages';
import { el } from './dom';
import { renderMarkdown } from './markdown';

const SPEAKERS: Record<ChatItem['kind'], string> = {
  user: 'You',
  assistant: 'Agent',
  'tool-call': 'Tool call',
  'tool-result': 'Tool result',
  context: 'Context',
};

/** The text a message was rendered from (Markdown for answers), for its Copy button. */
const sourceTexts = new WeakMap<HTMLElement, string>();

export function sourceTextOf(article: HTMLElement): string | undefined {
  return sourceTexts.get(article);
}

export function renderItem(item: ChatItem): HTMLElement {
  if (item.kind === 'user' || item.kind === 'assistant') {
    const article = el('article', `msg ${item.kind}${item.stopped === true ? ' stopped' : ''}`);
    article.dataset['id'] = item.id;
    article.setAttribute('aria-label', item.kind === 'user' ? 'You' : item.stopped === true ? 'The agent (stopped)' : 'The agent');
    sourceTexts.set(article, item.text);
    const speaker = el('div', 'speaker', SPEAKERS[item.kind]);
    if (item.stopped === true) speaker.append(el('span', 'badge', 'stopped'));
    const copy = el('button', 'secondary msg-action', 'Copy');
    copy.type = 'button';
    copy.dataset['action'] = 'copy-message';
    copy.setAttribute('aria-label', item.kind === 'user' ? 'Copy your message' : "Copy the agent's answer");
    speaker.append(copy);
    // Shown on the last prompt / last answer only (chat.ts marks them).
    const redo = el('button', `secondary msg-action ${item.kind === 'user' ? 'edit' : 'retry'}`, item.kind === 'user' ? 'Edit' : 'Retry');
    redo.type = 'button';
    redo.dataset['action'] = item.kind === 'user' ? 'edit-last' : 'retry-last';
    redo.setAttribute('aria-label', item.kind === 'user' ? 'Edit your last prompt and send it again' : 'Ask for the last answer again');
    speaker.append(redo);
    let body: HTMLElement;
    if (item.kind === 'user') {
      body = el('div', 'body plain', item.text);
    } else {
      body = el('div', 'body markdown');
      body.innerHTML = renderMarkdown(item.text);
    }
    article.append(speaker, body);
    return article;
  }
  if (item.kind === 'tool-call') return renderToolCard(item);
  // Sourced context (and a result whose call is not shown) is folded away: present, not in the way.
  const details = el('details', `msg ${item.kind}${item.isError === true ? ' error' : ''}`);
  details.dataset['id'] = item.id;
  const summary = el('summary');
  summary.append(el('span', 'kind', `${SPEAKERS[item.kind]} · `), el('span', 'title', item.title));
  details.append(summary, el('pre', '', item.text));
  return details;
}

const STATUS_TEXT = { running: 'running…', done: 'done', failed: 'failed', rejected: 'rejected', held: 'held: new instructions first' };

/**
 * A tool call as a card: the tool, its file as a link, its status, and (once it arrives) the
 * result folded; the arguments are folded too. `fillToolCard` puts the result in.
 */
export function renderToolCard(item: ChatItem): HTMLElement {
  const card = el('div', `msg tool-card running${item.discarded === true ? ' discarded' : ''}`);
  card.dataset['id'] = item.id;
  if (item.callId !== undefined) card.dataset['callId'] = item.callId;
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', `Tool call${item.discarded === true ? ' of a discarded attempt' : ''}: ${item.title}`);
  const head = el('div', 'tool-head');
  head.append(el('span', 'tool-name', item.tool ?? item.title));
  // Retry/Edit took the attempt out of the model's view, but what it wrote is still on disk.
  if (item.discarded === true) head.append(el('span', 'badge', 'discarded attempt'));
  if (item.file !== undefined) {
    const link = el('a', 'tool-file', item.file);
    link.dataset['href'] = item.file;
    link.tabIndex = 0;
    link.title = `Open ${item.file}`;
    head.append(link);
  }
  const status = el('span', 'tool-status', STATUS_TEXT.running);
  status.setAttribute('aria-live', 'polite');
  head.append(status);
  const args = el('details', 'tool-args');
  args.append(el('summary', '', 'Arguments'), el('pre', '', item.text));
  const result = el('details', 'tool-result');
  result.hidden = true;
  result.append(el('summary', '', 'Result'), el('pre', ''));
  card.append(head, args, result);
  return card;
}

/** Put a result into its call's card: the status, and the text folded. */
export function fillToolCard(card: HTMLElement, result: ChatItem): void {
  const status = result.status ?? (result.isError === true ? 'failed' : 'done');
  card.classList.remove('running');
  card.classList.add(status);
  const label = card.querySelector('.tool-status');
  if (label !== null) label.textContent = STATUS_TEXT[status];
  const folded = card.querySelector<HTMLDetailsElement>('details.tool-result');
  if (folded === null) return;
  folded.hidden = false;
  folded.dataset['id'] = result.id;
  const pre = folded.querySelector('pre');
  if (pre !== null) pre.textContent = result.text;
}

const VERBS = { pending: '', accepted: 'Accepted: written.', rejected: 'Rejected: not written.', stopped: 'Stopped: not written.' };

/**
 * The card of a proposed write/edit; `actions` get the buttons while it is pending. Reject sends
 * the optional reason typed next to it; the model reads it in the tool result.
 */
export function renderApproval(view: ApprovalView, actions: { diff(): void; accept(): void; reject(reason: string): void }): HTMLElement {
  const card = el('div', `approval ${view.state}`);
  card.id = `approval-${view.id}`;
  card.setAttribute('role', 'group');
  const what = view.isNewFile ? 'create' : view.tool === 'write' ? 'rewrite' : 'edit';
  card.setAttribute('aria-label', `Proposed ${what} of ${view.path}`);
  const line = el('div', 'approval-text');
  line.append(view.byUser === true ? `Apply the code block: ${what} ` : `The agent wants to ${what} `, el('code', '', view.path), '.');
  card.append(line);
  const row = el('div', 'approval-actions');
  if (view.state === 'pending') {
    const diff = el('button', 'secondary', 'View diff');
    const accept = el('button', 'accept', 'Accept');
    const reject = el('button', 'reject secondary', 'Reject');
    const reason = el('input', 'reject-reason');
    reason.hidden = view.byUser === true; // nobody to tell why
    reason.type = 'text';
    reason.placeholder = 'Why not? (optional, told to the agent)';
    reason.setAttribute('aria-label', 'Reason for rejecting (optional, told to the agent)');
    for (const [b, f] of [[diff, actions.diff], [accept, actions.accept], [reject, () => actions.reject(reason.value)]] as const) {
      b.type = 'button';
      b.addEventListener('click', f);
    }
    reason.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        actions.reject(reason.value);
      }
    });
    row.append(diff, accept, reject, reason);
  } else {
    row.append(el('span', `verdict ${view.state}`, view.verdict ?? VERBS[view.state]));
  }
  card.append(row);
  return card;
}

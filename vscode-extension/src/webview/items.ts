/** One chat item → its element. Model text is rendered by markdown-it (raw HTML off). */
import { el } from './dom';
import { renderMarkdown } from './markdown';
import type { ApprovalView, ChatItem } from './messages';

const SPEAKERS: Record<ChatItem['kind'], string> = {
  user: 'You',
  assistant: 'Agent',
  'tool-call': 'Tool call',
  'tool-result': 'Tool result',
  context: 'Context',
};

export function renderItem(item: ChatItem): HTMLElement {
  if (item.kind === 'user' || item.kind === 'assistant') {
    const article = el('article', `msg ${item.kind}${item.stopped === true ? ' stopped' : ''}`);
    article.dataset['id'] = item.id;
    article.setAttribute('aria-label', item.kind === 'user' ? 'You' : item.stopped === true ? 'The agent (stopped)' : 'The agent');
    const speaker = el('div', 'speaker', SPEAKERS[item.kind]);
    if (item.stopped === true) speaker.append(el('span', 'badge', 'stopped'));
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
  // Tool traffic and sourced context are folded away: present, but not in the way.
  const details = el('details', `msg ${item.kind}${item.isError === true ? ' error' : ''}`);
  details.dataset['id'] = item.id;
  const summary = el('summary');
  summary.append(el('span', 'kind', `${SPEAKERS[item.kind]} · `), el('span', 'title', item.title));
  details.append(summary, el('pre', '', item.text));
  return details;
}

const VERBS = { pending: '', accepted: 'Accepted: written.', rejected: 'Rejected: not written.', stopped: 'Stopped: not written.' };

/** The card of a proposed write/edit; `actions` get the buttons while it is pending. */
export function renderApproval(view: ApprovalView, actions: { diff(): void; accept(): void; reject(): void }): HTMLElement {
  const card = el('div', `approval ${view.state}`);
  card.id = `approval-${view.id}`;
  card.setAttribute('role', 'group');
  const what = view.isNewFile ? 'create' : view.tool === 'write' ? 'rewrite' : 'edit';
  card.setAttribute('aria-label', `Proposed ${what} of ${view.path}`);
  const line = el('div', 'approval-text');
  line.append(`The agent wants to ${what} `, el('code', '', view.path), '.');
  card.append(line);
  const row = el('div', 'approval-actions');
  if (view.state === 'pending') {
    const diff = el('button', 'secondary', 'View diff');
    const accept = el('button', 'accept', 'Accept');
    const reject = el('button', 'reject secondary', 'Reject');
    for (const [b, f] of [[diff, actions.diff], [accept, actions.accept], [reject, actions.reject]] as const) {
      b.type = 'button';
      b.addEventListener('click', f);
    }
    row.append(diff, accept, reject);
  } else {
    row.append(el('span', `verdict ${view.state}`, VERBS[view.state]));
  }
  card.append(row);
  return card;
}

/**
 * The answer being streamed. Text arrives in small deltas; re-rendering all of it per delta
 * grows with the answer's length and stutters on long ones. Instead the text is cut where a block
 * is finished (stableBoundary): finished blocks are rendered once and appended, and only the
 * unfinished tail is rendered again, at most once per animation frame.
 */
import { el } from './dom';
import { renderMarkdown, stableBoundary } from './markdown';

export class StreamView {
  readonly root: HTMLElement;
  private readonly stable: HTMLElement;
  private readonly tail: HTMLElement;
  private text = '';
  private renderedTo = 0;
  private frame: number | undefined;

  constructor(container: HTMLElement, private readonly onRendered: () => void) {
    this.root = el('article', 'msg assistant streaming');
    this.root.setAttribute('aria-label', 'The agent, answering');
    this.root.setAttribute('aria-busy', 'true');
    const body = el('div', 'body markdown');
    this.stable = el('div', 'stream-stable');
    this.tail = el('div', 'stream-tail');
    body.append(this.stable, this.tail);
    this.root.append(el('div', 'speaker', 'Agent'), body);
    container.append(this.root);
  }

  push(delta: string): void {
    this.text += delta;
    this.frame ??= requestAnimationFrame(() => {
      this.frame = undefined;
      this.flush();
    });
  }

  remove(): void {
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
    this.root.remove();
  }

  private flush(): void {
    const boundary = stableBoundary(this.text);
    if (boundary > this.renderedTo) {
      const block = el('div', 'stream-block');
      block.innerHTML = renderMarkdown(this.text.slice(this.renderedTo, boundary));
      this.stable.append(block);
      this.renderedTo = boundary;
    }
    this.tail.innerHTML = renderMarkdown(this.text.slice(this.renderedTo));
    this.onRendered();
  }
}

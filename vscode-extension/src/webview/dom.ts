/** Small DOM helpers shared by the chat webview's modules. */

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`missing #${id}`);
  return node as T;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== '') node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function button(label: string, className: string, onClick: () => void, ariaLabel?: string): HTMLButtonElement {
  const b = el('button', className, label);
  b.type = 'button';
  if (ariaLabel !== undefined) b.setAttribute('aria-label', ariaLabel);
  b.addEventListener('click', onClick);
  return b;
}

/**
 * A name (a path, or a heading naming paths) that may wrap after each path separator: the text
 * with a <wbr> after every "/" or "\\", so a long path breaks between its parts, not mid-name.
 */
export function pathText(className: string, text: string): HTMLSpanElement {
  const span = el('span', className);
  for (const part of text.split(/(?<=[/\\])/)) {
    span.append(part);
    if (/[/\\]$/.test(part)) span.append(document.createElement('wbr'));
  }
  span.title = text;
  return span;
}

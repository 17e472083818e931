/** Small wording helpers shared by the extension and its webviews (no vscode, no DOM). */

/** "1 message", "2 messages"; `pluralForm` for irregular words. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** How long ago `then` was, in the largest whole unit: "just now", "5 min ago", "3 h ago", "2 days ago". */
export function formatAge(then: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 30) return days === 1 ? 'yesterday' : `${days} days ago`;
  const months = Math.round(days / 30);
  if (months < 12) return months === 1 ? 'a month ago' : `${months} months ago`;
  const years = Math.round(days / 365);
  return years <= 1 ? 'a year ago' : `${years} years ago`;
}

/** A prompt's first line, trimmed to `max` characters at a word boundary, for a session title. */
export function titleFromPrompt(prompt: string, max = 60): string {
  const firstLine = prompt
    // A mention reads as its label: "@[label](dsh-session:...)" -> "@label".
    .replace(/@\[([^\]]*)\]\(dsh-session:[A-Za-z0-9_-]+\)/g, '@$1')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '');
  if (firstLine === undefined) return '';
  const line = firstLine.replace(/\s+/g, ' ');
  if (line.length <= max) return line;
  const cut = line.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:!?-]+$/, '')}…`;
}

/** Text to put back into the prompt box: what is there now, then each returned prompt. */
export function mergeIntoPrompt(current: string, returned: readonly string[]): string {
  return [current, ...returned].filter((t) => t.trim() !== '').join('\n\n');
}

/** `text` safe inside HTML text and attribute values (the webview shell's and rendered Markdown's). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

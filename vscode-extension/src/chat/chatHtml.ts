/** The chat webview's static page body; chat.ts (the page script) fills it in. */
import { escapeHtml } from '../shared/text';

/**
 * What Restricted Mode limits (package.json, capabilities.untrustedWorkspaces): the chat is
 * shown this while the folder is not trusted, so nobody wonders why a workspace setting is
 * ignored.
 */
export const RESTRICTED_TEXT =
  'Restricted Mode: this folder is not trusted. The chat works, but the interpreter, the ' +
  "sidecar's store and home and the model endpoint come from your User settings only; this " +
  "folder's settings for them (dsh.pythonPath, dsh.importStrategy, dsh.store.path, " +
  'dsh.instructions.dshHome, dsh.model.baseUrl) are ignored.';

export function chatBody(folderName: string): string {
  return `<header>
<div class="heading"><span id="session-title">New session</span><span id="folder">${escapeHtml(folderName)}</span><span id="session"></span></div>
<div class="header-actions">
<button id="sessions-button" class="secondary" aria-haspopup="listbox" aria-expanded="false" aria-controls="session-list" title="Earlier sessions of this folder">Sessions</button>
<button id="new-session" class="secondary" title="Start a new session for this folder">New</button>
<button id="compact" class="secondary" title="Summarize the visible history into one message">Compact</button>
</div>
<ul id="session-list" role="listbox" aria-label="Sessions of this folder" tabindex="-1" hidden></ul>
</header>
<div id="restricted" role="note" aria-label="Restricted Mode" hidden><span class="text">${escapeHtml(RESTRICTED_TEXT)}</span><button id="manage-trust" class="secondary">Manage Workspace Trust</button></div>
<main id="log" role="log" aria-live="off" aria-label="Conversation"></main>
<div id="status" role="status" aria-live="polite"></div>
<div id="confirm" hidden></div>
<div id="notice" hidden></div>
<section id="pending" aria-label="Context pending for the next step" hidden></section>
<footer>
<ul id="queue" aria-label="Messages queued for when the agent finishes" hidden></ul>
<ul id="mentions" role="listbox" aria-label="Sessions to mention" hidden></ul>
<div id="prompt-wrap"><div id="prompt-backdrop" aria-hidden="true"></div>
<textarea id="prompt" rows="3" role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="mentions" aria-label="Message to the agent" placeholder="Ask the agent… (Enter sends, Shift+Enter new line, ↑ last prompt, @ mentions a session, Esc stops)"></textarea></div>
<button id="send">Send</button>
</footer>`;
}

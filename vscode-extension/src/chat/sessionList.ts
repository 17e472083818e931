/** The folder's earlier sessions for the panel's session list (pure: no vscode, no I/O). */
import type { SessionHeader } from '../protocol';
import type { SessionListItem } from '../shared/chatMessages';
import { formatAge } from '../shared/text';

export const UNTITLED = 'Untitled session';

/**
 * Sessions whose cwd is the folder (`sameFolder` compares paths, resolving symlinks), newest
 * first as `dsh/session/list` returns them, with the current one marked.
 */
export function sessionsOfFolder(
  headers: readonly SessionHeader[],
  sameFolder: (cwd: string) => boolean,
  currentId: string | undefined,
  now: number,
): SessionListItem[] {
  return headers
    .filter((h) => sameFolder(h.cwd))
    .map((h) => ({
      id: h.id,
      title: h.title !== undefined && h.title.trim() !== '' ? h.title : UNTITLED,
      age: formatAge(h.createdAt, now),
      createdAt: h.createdAt,
      current: h.id === currentId,
    }));
}
